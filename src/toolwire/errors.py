"""Every exception toolwire raises, in one tree.

::

    ToolwireError
    ├── ToolDefinitionError      a tool is defined wrongly (empty or duplicate name, bad schema)
    ├── ToolCallError            a model's call does not fit its tool; str() is the message
    │                            the model receives, so it can fix its next call
    ├── ToolError                raised by a tool: its message goes to the model as the error
    │                            result, as written (no exception type in front)
    ├── TranscriptError          a saved transcript or run log cannot be read
    ├── WireFormatError          a body does not look like the wire it was said to be
    │   └── JSONTextError        JSON text toolwire will not read (broken, too deep, a number
    │                            out of range); also a json.JSONDecodeError
    ├── ConfigError              a setting a person must fix (model id, missing API key)
    └── ProviderError            the provider answered with an error
        ├── RateLimitError       429: retry after a pause
        ├── OverloadedError      529 / 503: retry after a pause
        ├── ServerError          5xx: retry may help
        ├── InvalidRequestError  400 / 422: our request broke a rule; do not retry
        │   └── ContextLengthError  the prompt does not fit the model's context window
        ├── AuthenticationError  401: bad or missing key
        ├── PermissionDeniedError 403
        ├── NotFoundError        404: unknown model or path
        └── StreamError          the stream broke or carried an error event mid-reply
            └── ResponseTooLarge a body, its decompressed size, a stream line or an error
                                 body went over its bound (`toolwire.http.limits.Limits`)

Imports nothing of toolwire: it is the bottom floor, under the JSON reader (`toolwire._json`),
which raises `JSONTextError`.

Errors a model can fix are values (a `ToolResultPart` with ``is_error=True``), never exceptions
that end a run. `ToolCallError` exists so `validate_call` can be used on its own.
"""

from __future__ import annotations

import json
from typing import Any


class ToolwireError(Exception):
    """Base class of every toolwire exception."""


class ToolDefinitionError(ToolwireError, ValueError):
    """A tool is defined wrongly. Raised when the tool is defined, before any model sees it."""


class ToolCallError(ToolwireError):
    """A tool call that does not fit its tool.

    ``str(error)`` is the message sent back to the model. ``kind`` is one of ``unknown_tool``,
    ``invalid_json``, ``not_an_object``, ``too_deep``, ``schema``, ``unknown_field``.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        tool: str | None = None,
        problems: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.tool = tool
        self.problems = problems

    def __str__(self) -> str:
        return self.message


class ToolError(ToolwireError):
    """Raised inside a tool to send the model an error result worded for it.

    Any other exception a tool raises also becomes an error result, prefixed with its type.
    """


class TranscriptError(ToolwireError, ValueError):
    """A saved transcript, cassette or run log is malformed."""


class WireFormatError(ToolwireError, ValueError):
    """A body does not have the shape of the wire format it was decoded as."""


class JSONTextError(WireFormatError, json.JSONDecodeError):
    """JSON text that toolwire will not read: broken, nested deeper than the limit, or holding a
    number no float holds (see `toolwire._json`). ``msg`` says what and where; it is also a
    `json.JSONDecodeError`, so code written for the standard parser's error catches it."""

    def __init__(self, msg: str, doc: str = "", pos: int = 0) -> None:
        json.JSONDecodeError.__init__(self, msg, doc, pos)
        if not doc:  # no place in the text to name (a limit, a number): the message alone
            self.args = (msg,)


class ConfigError(ToolwireError):
    """Something a person must fix before anything is sent (a model id, an API key)."""


class ProviderError(ToolwireError):
    """The provider answered with an error.

    ``retryable`` says whether sending the same request again may succeed; ``retry_after`` is
    the wait the provider asked for, in seconds, when it gave one.
    """

    default_retryable = False

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error_type: str | None = None,
        wire: str | None = None,
        retryable: bool | None = None,
        retry_after: float | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.error_type = error_type
        self.wire = wire
        self.retryable = self.default_retryable if retryable is None else retryable
        self.retry_after = retry_after
        self.body = body

    def __str__(self) -> str:
        where = f"{self.status} " if self.status is not None else ""
        kind = f"{self.error_type}: " if self.error_type else ""
        return f"{where}{kind}{self.message}"


class RateLimitError(ProviderError):
    default_retryable = True


class OverloadedError(ProviderError):
    default_retryable = True


class ServerError(ProviderError):
    default_retryable = True


class InvalidRequestError(ProviderError):
    pass


class ContextLengthError(InvalidRequestError):
    pass


class AuthenticationError(ProviderError):
    pass


class PermissionDeniedError(ProviderError):
    pass


class NotFoundError(ProviderError):
    pass


class StreamError(ProviderError):
    default_retryable = True


class ResponseTooLarge(StreamError):
    """What a server sent went over a bound; ``limit`` names it (``max_body``,
    ``max_decoded``, ``max_line`` or ``max_error_body``). Not retried: the same request would
    bring the same reply."""

    default_retryable = False

    def __init__(self, message: str, *, limit: str, **kwargs: Any) -> None:
        kwargs.setdefault("error_type", "too_large")
        super().__init__(message, **kwargs)
        self.limit = limit
