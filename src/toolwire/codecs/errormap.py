"""Provider errors as toolwire's typed errors: the HTTP status and the provider's words mapped
to a `ProviderError` subclass, a status read from an error's words, ``retry-after`` headers and
AWS's ways of naming an error type.

Owns `provider_error`, `status_in_words`, `retry_after_from`, `aws_error_type` and
`AWS_RETRIED` (re-exported by `toolwire.codecs.base` for the wires). Pure; imports only
`toolwire.errors`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
)

_CONTEXT_WORDS = (
    "context length",
    "context_length",
    "context window",
    "prompt is too long",
    "too many tokens",
    "maximum context",
    "input is too long",
    "exceeds the maximum number of tokens",
    "input token count",
)


def provider_error(
    status: int,
    message: str,
    *,
    wire: str,
    error_type: str | None = None,
    body: Any = None,
    retry_after: float | None = None,
) -> ProviderError:
    """The typed error for an HTTP status and a provider's message."""
    lowered = f"{error_type or ''} {message}".lower()
    cls: type[ProviderError]
    if any(word in lowered for word in _CONTEXT_WORDS):
        cls = ContextLengthError
    elif status == 429:
        cls = RateLimitError
    elif status in (503, 529) or "overloaded" in lowered:
        cls = OverloadedError
    elif status == 401:
        cls = AuthenticationError
    elif status == 403:
        cls = PermissionDeniedError
    elif status == 404:
        cls = NotFoundError
    elif status in (408, 409) or status >= 500:
        cls = ServerError
    elif 400 <= status < 500:
        cls = InvalidRequestError
    else:
        cls = ProviderError
    return cls(message, status=status, error_type=error_type, wire=wire, body=body,
               retry_after=retry_after)


_STATUS_WORDS: tuple[tuple[str, int], ...] = (
    ("rate_limit", 429), ("rate limit", 429), ("rate exceeded", 429), ("throttl", 429),
    ("too many requests", 429),
    ("quota", 429), ("overloaded", 529), ("slow_down", 503), ("unavailable", 503),
    ("context_length", 400), ("invalid_request", 400), ("validation", 400),
    ("authentication", 401), ("api_key", 401), ("api key", 401), ("security token", 403),
    ("permission", 403), ("access denied", 403), ("not_found", 404), ("not found", 404),
)


def status_in_words(label: str) -> int:
    """The HTTP status an error is sent with, from its type, code or message (an error body that
    came with a success status says it only in words); 500 when the words say nothing known."""
    lowered = label.lower()
    return next((status for word, status in _STATUS_WORDS if word in lowered), 500)


def retry_after_from(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds), if given."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    for key, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = lower.get(key)
        if raw is None:
            continue
        try:
            return max(0.0, float(raw) * scale)
        except ValueError:
            continue
    return None


AWS_RETRIED = frozenset({"ModelNotReadyException", "ModelStreamErrorException"})
"""AWS error types that a retry may cure although their status (424, 429) says otherwise
(Bedrock's documentation asks to retry both)."""


def aws_error_type(raw: Any) -> str | None:
    """``ThrottlingException`` from the ways AWS writes an error type: the ``x-amzn-ErrorType``
    header (``ThrottlingException:http://...``), a body's ``__type``
    (``com.amazon...#ThrottlingException``) or a stream's ``:exception-type``
    (``throttlingException``)."""
    if not isinstance(raw, str) or not raw:
        return None
    name = raw.split(":", 1)[0].rsplit("#", 1)[-1]
    return name[0].upper() + name[1:] if name else None


__all__ = [
    "AWS_RETRIED", "aws_error_type", "provider_error", "retry_after_from", "status_in_words",
]
