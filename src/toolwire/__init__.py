"""toolwire: LLM tool calling done right on the wire.

Importing this package only defines things: no I/O, no prints, and no heavy imports. Public
names are re-exported here and listed in ``__all__``.
"""

from __future__ import annotations

import typing as _typing

from toolwire.errors import (
    AuthenticationError,
    ConfigError,
    ContextLengthError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
    ResponseTooLarge,
    ServerError,
    StreamError,
    ToolCallError,
    ToolDefinitionError,
    ToolError,
    ToolwireError,
    TranscriptError,
    WireFormatError,
)
from toolwire.transcript import (
    Cache,
    ContextManagement,
    Grammar,
    MediaPart,
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
from toolwire.transcript_json import from_json, to_json
from toolwire.version import __version__

if _typing.TYPE_CHECKING:  # what the lazy names below are, for type checkers and editors
    from toolwire.agent.dispatch import Approval
    from toolwire.agent.loop import Agent, AgentRun, RunResult, RunStop, Step
    from toolwire.agent.settings import Limits, Output, RequestSettings, ToolPolicy
    from toolwire.conversion import Conversion, convert, detect_wire
    from toolwire.emulator import Emulator
    from toolwire.failover import ChainLink, FallbackChain, fallback
    from toolwire.http.client import HttpModel, RetryPolicy, model
    from toolwire.media import Audio, Document, Image
    from toolwire.protocol import Model
    from toolwire.rules import Problem, check_transcript
    from toolwire.schema.freeform import FreeformTool
    from toolwire.schema.tool import Tool, Toolset, tool, validate_call
    from toolwire.telemetry.settings import instrument, uninstrument

# Names whose modules pull in asyncio, HTTP or other weight are imported on first use.
_LAZY: dict[str, str] = {
    "Agent": "agent.loop",
    "Audio": "media",
    "Document": "media",
    "FreeformTool": "schema.freeform",
    "Image": "media",
    "AgentRun": "agent.loop",
    "Approval": "agent.dispatch",
    "ChainLink": "failover.shaping",
    "Conversion": "conversion",
    "Emulator": "emulator",
    "FallbackChain": "failover.chain",
    "HttpModel": "http.client",
    "Limits": "agent.settings",
    "Output": "agent.settings",
    "RequestSettings": "agent.settings",
    "ToolPolicy": "agent.settings",
    "Model": "protocol",
    "Problem": "rules",
    "RetryPolicy": "http.client",
    "RunResult": "agent.loop",
    "RunStop": "agent.loop",
    "Step": "agent.loop",
    "Tool": "schema.tool",
    "Toolset": "schema.tool",
    "check_transcript": "rules",
    "convert": "conversion",
    "detect_wire": "conversion",
    "fallback": "failover.chain",
    "instrument": "telemetry.settings",
    "model": "http.client",
    "tool": "schema.tool",
    "uninstrument": "telemetry.settings",
    "validate_call": "schema.tool",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolwire' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    if name == "Agent":  # Agent(model="anthropic:...") reads the id with the HTTP client
        from toolwire.protocol import read_model_ids

        read_model_ids(_model_from_id)
    return value


def _model_from_id(model_id: str) -> Model:
    from toolwire.http.client import model

    return model(model_id)

__all__ = [
    "Agent",
    "AgentRun",
    "Approval",
    "Audio",
    "AuthenticationError",
    "Cache",
    "ChainLink",
    "ConfigError",
    "ContextLengthError",
    "ContextManagement",
    "Conversion",
    "Document",
    "Emulator",
    "FallbackChain",
    "FreeformTool",
    "Grammar",
    "HttpModel",
    "Image",
    "InvalidRequestError",
    "Limits",
    "MediaPart",
    "Message",
    "Model",
    "NotFoundError",
    "OpaquePart",
    "Output",
    "OverloadedError",
    "Part",
    "PermissionDeniedError",
    "Problem",
    "ProviderError",
    "RateLimitError",
    "ReasoningPart",
    "Reply",
    "Request",
    "RequestSettings",
    "ResponseTooLarge",
    "RetryPolicy",
    "RunResult",
    "RunStop",
    "ServerError",
    "Step",
    "StopReason",
    "StreamError",
    "TextPart",
    "Tool",
    "ToolCallError",
    "ToolCallPart",
    "ToolChoice",
    "ToolDefinitionError",
    "ToolError",
    "ToolPolicy",
    "ToolResultPart",
    "ToolSpec",
    "Toolset",
    "ToolwireError",
    "TranscriptError",
    "Usage",
    "WireFormatError",
    "__version__",
    "check_transcript",
    "convert",
    "detect_wire",
    "fallback",
    "from_json",
    "instrument",
    "model",
    "to_json",
    "tool",
    "uninstrument",
    "validate_call",
]
