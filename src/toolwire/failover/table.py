"""Which failures move a fallback chain on to its next model, and which end the run.

Owns `FAILURES` (the table, one `Failure` per row, in the order they are matched), `failure`
(the row an error falls under) and `named` (an error of the same kind whose message names the
model it came from). The table is the one place this is decided; `docs/agent.md` prints it.
Imports only the errors.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolwire.errors import (
    AuthenticationError,
    ContextLengthError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
    ServerError,
    StreamError,
    WireFormatError,
)


@dataclass(frozen=True, slots=True)
class Failure:
    """One row of the table: the errors it covers, a short name (``why`` in the events and the
    run log), whether the chain ``moves_on`` (else the run ends, naming the model) and what
    the row means."""

    errors: tuple[type[Exception], ...]
    why: str
    moves_on: bool
    means: str


FAILURES: tuple[Failure, ...] = (
    Failure((OverloadedError,), "overloaded", True,
            "the provider is overloaded: 529 on Anthropic, 503 on the other wires, Bedrock's "
            "ServiceUnavailableException, after the model's own retries"),
    Failure((RateLimitError,), "rate_limited", True,
            "429: a rate limit still refused after the model's own retries"),
    Failure((ContextLengthError,), "context_too_long", True,
            "the conversation does not fit this model's context window"),
    Failure((StreamError,), "stream_broke", True,
            "the stream broke (or carried an error event) before the reply was whole; no "
            "part of a broken reply is kept, so the next model answers the same request"),
    Failure((WireFormatError,), "bad_reply", True,
            "the reply could not be used (a stream that cannot be read, a body that is not "
            "the wire's), after the model sent the request once more"),
    Failure((ServerError,), "server_error", True,
            "any other 5xx: the provider failed, after the model's own retries"),
    Failure((AuthenticationError, PermissionDeniedError), "auth", False,
            "401 or 403: the key is wrong or lacks the right; a person must fix it"),
    Failure((NotFoundError,), "not_found", False,
            "404: the model id or the path is wrong; a person must fix it"),
    Failure((InvalidRequestError,), "bad_request", False,
            "400 or 422: the request broke a rule of the provider; another model would "
            "likely refuse it too, and a person should see it"),
    Failure((ProviderError,), "provider_error", False,
            "any other error the provider answered with"),
)


def failure(error: BaseException) -> Failure | None:
    """The row of `FAILURES` that ``error`` falls under (None: not an error of a provider or a
    reply, which the chain lets through as it is)."""
    for row in FAILURES:
        if isinstance(error, row.errors):
            return row
    return None


def named(error: ProviderError | WireFormatError, model: str,
          tried: str = "") -> ProviderError | WireFormatError:
    """An error of ``error``'s own kind whose message begins with ``model`` (and ``tried``: what
    the models before it said), so the run's stop names the model that failed."""
    after = f" (before it: {tried})" if tried else ""
    if isinstance(error, ProviderError):
        made: ProviderError | WireFormatError = type(error)(
            f"model {model}: {error.message}{after}", status=error.status,
            error_type=error.error_type, wire=error.wire,
            retryable=error.retryable, retry_after=error.retry_after, body=error.body)
    else:
        made = WireFormatError(f"model {model}: {error}{after}")
    made.__cause__ = error
    return made


__all__ = ["FAILURES", "Failure", "failure", "named"]
