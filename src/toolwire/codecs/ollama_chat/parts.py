"""Reading the Ollama native chat wire: replies, stream lines and error bodies.

Owns the wire's name, tool-name map and stop-reason map, the shape checks shared with request
reading (`wrong`, `mapping`, `text_of`, `list_of`), the decoding of an assistant message
(thinking, text, whole tool calls with object arguments, ids made when missing), the assembly
of a `Reply`, the NDJSON `StreamDecoder`, and reading error bodies. Used only by the
ollama-chat codec, which re-exports what is public. Pure: no HTTP, no vendor SDK; imports only
the transcript, the error tree and the codec base.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.codecs.base import PORTABLE_NAME, NameMap, call_id_for, provider_error
from toolwire.codecs.base import (
    wrong_shape as wrong,
)
from toolwire.codecs.framing import NDJSONFramer
from toolwire.errors import ProviderError, StreamError
from toolwire.events import (
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from toolwire.transcript import (
    JSON,
    Message,
    ReasoningPart,
    Reply,
    StopReason,
    TextPart,
    ToolCallPart,
    ToolSpec,
    Usage,
)

WIRE = "ollama-chat"

STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "load": "other",
    "unload": "other",
}

REPLY_KEYS = frozenset({"model", "message", "done", "done_reason", "prompt_eval_count",
                         "eval_count"})
MESSAGE_KEYS = frozenset({"role", "content", "thinking", "tool_calls", "tool_name",
                           "tool_call_id"})


ERROR_PREFIX = "Error: "
EMPTY_RESULT = "(no output)"


def name_map(tools: Sequence[ToolSpec]) -> NameMap:
    """The tool-name map for a tool list (empty, and quick, when every name fits)."""
    names = [t.name for t in tools]
    if all(map(PORTABLE_NAME.match, names)):
        return NameMap()
    return NameMap.build(names, pattern=PORTABLE_NAME)


class Seeder:
    """Deterministic ids for calls that came without one: model, created_at and the calls so far.

    Every call is added in order; the hashing is done only when an id must be made up.
    """

    def __init__(self, model: Any, created_at: Any) -> None:
        self._base = f"{model}\x00{created_at}"
        self._hash: Any = None
        self._pending: list[tuple[str, Any]] = []
        self._count = 0

    def add(self, wire_name: str, wire_args: Any) -> None:
        self._pending.append((wire_name, wire_args))
        self._count += 1

    def fold(self) -> None:
        """Hash the calls added so far (done before their values can change hands)."""
        if self._hash is None:
            self._hash = hashlib.sha256(self._base.encode())
        for wire_name, wire_args in self._pending:
            self._hash.update(
                f"\x00{wire_name}\x00{json.dumps(wire_args, sort_keys=True)}".encode())
        self._pending.clear()

    def made_id(self) -> str:
        """The id for the call added last."""
        self.fold()
        return call_id_for(self._hash.hexdigest(), self._count - 1)


def mapping(value: Any, what: str) -> Mapping[str, Any]:
    if isinstance(value, dict):
        return value
    if not isinstance(value, Mapping):
        raise wrong(what, "an object", value)
    return value


def text_of(value: Any, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise wrong(what, "a string", value)
    return value


def list_of(value: Any, what: str, items: str) -> list[Any]:
    """A list field (absent or null reads as empty)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise wrong(what, f"a list of {items}", value)
    return value


def decode_call(raw: Any, seeder: Seeder, names: NameMap, where: str) -> ToolCallPart:
    """One call; arguments are an object (a string is accepted and kept as raw text)."""
    call = mapping(raw, where)
    function = mapping(call.get("function", call), f"{where}.function")
    wire_name = text_of(function.get("name"), f"{where}.function.name")
    args = function.get("arguments")
    if args is not None and not isinstance(args, (dict, str)):
        raise wrong(f"{where}.function.arguments", "an object or a string", args)
    seeder.add(wire_name, args)
    given = call.get("id")
    call_id = given if isinstance(given, str) and given else seeder.made_id()
    name = names.user(wire_name)
    if isinstance(args, str):
        return ToolCallPart.from_raw(id=call_id, name=name, raw_arguments=args)
    return ToolCallPart(id=call_id, name=name, arguments={} if args is None else args)


def unknown_keys(obj: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in known}


def wrap_own(extras: Mapping[str, Any]) -> dict[str, JSON] | None:
    return {WIRE: dict(extras)} if extras else None


def decode_assistant(raw: Any, seeder: Seeder, names: NameMap, where: str = "message"
                     ) -> Message:
    msg = mapping(raw, where)
    parts: list[Any] = []
    thinking = text_of(msg.get("thinking"), f"{where}.thinking")
    if thinking:
        parts.append(ReasoningPart(text=thinking, provider_data={WIRE: thinking}))
    content = text_of(msg.get("content"), f"{where}.content")
    if content:
        parts.append(TextPart(text=content))
    calls = list_of(msg.get("tool_calls"), f"{where}.tool_calls", "tool calls")
    parts.extend(decode_call(c, seeder, names, f"{where}.tool_calls[{i}]")
                 for i, c in enumerate(calls))
    return Message(role="assistant", parts=tuple(parts),
                   provider_data=wrap_own(unknown_keys(msg, MESSAGE_KEYS)))


def stop_of(calls: tuple[ToolCallPart, ...], raw: str | None) -> tuple[StopReason, bool]:
    """The normalised stop and whether a call was cut off; calls decide, not done_reason."""
    if calls:
        # Broken arguments count as cut off only when the reply says it hit the token limit;
        # otherwise they go back to the model as an error result it can fix.
        if raw == "length" and any(c.parse_error is not None for c in calls):
            return "max_tokens", True
        return "tool_calls", False
    if raw is None:
        return "end_turn", False
    return STOP_REASONS.get(raw, "other"), False


def count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def build_reply(message: Message, final: Mapping[str, Any], model: Any,
                extras: dict[str, Any]) -> Reply:
    """The reply from its message and the final body (or final stream line)."""
    raw = final.get("done_reason")
    raw_stop = raw if isinstance(raw, str) and raw else None
    stop, truncated = stop_of(message.tool_calls, raw_stop)
    usage = Usage(input_tokens=count(final.get("prompt_eval_count")),
                  output_tokens=count(final.get("eval_count")))
    return Reply(message=message, stop=stop, raw_stop=raw_stop, usage=usage,
                 model=model if isinstance(model, str) else None, truncated_call=truncated,
                 provider_data=wrap_own(extras))


class StreamDecoder:
    """Assembles an NDJSON stream line by line; an error line is raised on the next call."""

    def __init__(self, names: NameMap) -> None:
        self._names = names
        self._framer = NDJSONFramer()
        self._seeder: Seeder | None = None
        self._model: Any = None
        self._thinking: list[str] = []
        self._text: list[str] = []
        self._calls: list[ToolCallPart] = []
        self._message_extras: dict[str, Any] = {}
        self._logprobs: list[Any] = []
        self._final: Mapping[str, Any] | None = None
        self._error: ProviderError | None = None

    def feed(self, data: bytes) -> list[StreamEvent]:
        if self._error is not None:
            raise self._error
        events: list[StreamEvent] = []
        for line in self._framer.feed(data):
            self._line(line, events)
        return events

    def _line(self, line: str, events: list[StreamEvent]) -> None:
        if self._error is not None or self._final is not None:
            return
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            self._error = StreamError(f"a stream line is not JSON: {exc.msg}", wire=WIRE,
                                      body=line)
            return
        if not isinstance(obj, (dict, Mapping)):
            self._error = StreamError("a stream line is not a JSON object", wire=WIRE, body=obj)
            return
        if "error" in obj:
            self._error = stream_error(obj)
            return
        if self._seeder is None:
            self._seeder = Seeder(obj.get("model"), obj.get("created_at"))
        self._model = obj.get("model", self._model)
        if isinstance(obj.get("logprobs"), list):
            self._logprobs.extend(obj["logprobs"])
        msg = mapping(obj.get("message") or {}, "message")
        self._message_extras.update(unknown_keys(msg, MESSAGE_KEYS))
        thinking = text_of(msg.get("thinking"), "message.thinking")
        if thinking:
            self._thinking.append(thinking)
            events.append(ReasoningDelta(text=thinking))
        content = text_of(msg.get("content"), "message.content")
        if content:
            self._text.append(content)
            events.append(TextDelta(text=content))
        calls = list_of(msg.get("tool_calls"), "message.tool_calls", "tool calls")
        for i, raw in enumerate(calls):
            index = len(self._calls)
            call = decode_call(raw, self._seeder, self._names, f"message.tool_calls[{i}]")
            self._seeder.fold()  # the call leaves in an event: hash it as it is now
            self._calls.append(call)
            events.append(ToolCallStarted(index=index, id=call.id, name=call.name))
            events.append(ToolCallDelta(index=index, fragment=call.arguments_text))
            events.append(ToolCallFinished(index=index, call=call))
        if obj.get("done") is True:
            self._final = obj

    def finish(self) -> Reply:
        for line in self._framer.close():
            self._line(line, [])
        if self._error is not None:
            raise self._error
        if self._final is None:
            raise StreamError("the stream ended before its final line (done: true)", wire=WIRE)
        parts: list[Any] = []
        thinking = "".join(self._thinking)
        if thinking:
            parts.append(ReasoningPart(text=thinking, provider_data={WIRE: thinking}))
        if self._text:
            parts.append(TextPart(text="".join(self._text)))
        parts.extend(self._calls)
        message = Message(role="assistant", parts=tuple(parts),
                          provider_data=wrap_own(self._message_extras))
        extras = unknown_keys(self._final, REPLY_KEYS)
        if self._logprobs:
            extras["logprobs"] = self._logprobs
        return build_reply(message, self._final, self._model, extras)


def message_and_type(body: Any, status: int) -> tuple[str, str | None, Any]:
    """Message, error type and parsed body of ``{"error": "..."}`` (or the /v1 object form)."""
    if isinstance(body, bytes | bytearray):
        body = bytes(body).decode("utf-8", errors="replace")
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except json.JSONDecodeError:
            return (body.strip() or f"HTTP {status}"), None, body
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, str):
            return error, None, body
        if isinstance(error, Mapping):  # the OpenAI-style shape of the /v1 layer
            kind = error.get("type")
            return (str(error.get("message") or f"HTTP {status}"),
                    kind if isinstance(kind, str) else None, body)
    return f"HTTP {status}", None, body


def stream_error(obj: Mapping[str, Any]) -> ProviderError:
    """An error line inside a stream: typed when its message says what it is."""
    message, kind, _ = message_and_type(obj, 200)
    typed = provider_error(200, message, wire=WIRE, error_type=kind, body=obj)
    cls = StreamError if type(typed) is ProviderError else type(typed)
    return cls(message, error_type=kind, wire=WIRE, body=dict(obj))
