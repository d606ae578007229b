"""toolwire: LLM tool calling done right on the wire.

Importing this package only defines things: no I/O, no prints, and no heavy imports. Public
names are re-exported here and listed in ``__all__``.
"""

from __future__ import annotations

from .errors import (
    AuthenticationError,
    ConfigError,
    ContextLengthError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
    ServerError,
    StreamError,
    ToolCallError,
    ToolDefinitionError,
    ToolwireError,
    TranscriptError,
    WireFormatError,
)
from .transcript import (
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    Reply,
    Request,
    StopReason,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from .transcript_json import from_json, to_json

__version__ = "0.1.0"

__all__ = [
    "AuthenticationError",
    "ConfigError",
    "ContextLengthError",
    "InvalidRequestError",
    "Message",
    "NotFoundError",
    "OpaquePart",
    "OverloadedError",
    "Part",
    "PermissionDeniedError",
    "ProviderError",
    "RateLimitError",
    "ReasoningPart",
    "Reply",
    "Request",
    "ServerError",
    "StopReason",
    "StreamError",
    "TextPart",
    "ToolCallError",
    "ToolCallPart",
    "ToolChoice",
    "ToolDefinitionError",
    "ToolResultPart",
    "ToolSpec",
    "ToolwireError",
    "TranscriptError",
    "Usage",
    "WireFormatError",
    "__version__",
    "from_json",
    "to_json",
]
