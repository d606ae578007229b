"""Ollama native chat: the NDJSON stream, read incrementally and written back.

Owns `StreamDecoder` (lines split anywhere -> `StreamEvent` values, each call whole as it
arrives, then the whole `Reply`; an error line is raised on the next call) and `encode_stream`
(a reply as the server streams it: text in pieces, each call whole on its own line). Pure:
imports only the transcript, events, the error tree, the codec base and framing, and this
wire's ``parts`` and ``reply``; no HTTP, no vendor SDK.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from typing import Any

from toolwire import _json
from toolwire.codecs.base import dumps, provider_error
from toolwire.codecs.framing import NDJSONFramer
from toolwire.codecs.ollama_chat.parts import (
    MESSAGE_KEYS,
    WIRE,
    Seeder,
    decode_call,
    list_of,
    mapping,
    names_for,
    text_of,
    unknown_keys,
    wrap_own,
)
from toolwire.codecs.ollama_chat.reply import (
    REPLY_KEYS,
    build_reply,
    encode_response,
    message_and_type,
)
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
    Message,
    ReasoningPart,
    Reply,
    Request,
    TextPart,
    ToolCallPart,
)


class StreamDecoder:
    """Assembles an NDJSON stream line by line; an error line is raised on the next call.

    With ``request``, tool names are mapped back to the user's.
    """

    def __init__(self, *, request: Request | None = None) -> None:
        self._names = names_for(request)
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
            obj = _json.loads(line)
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


def stream_error(obj: Mapping[str, Any]) -> ProviderError:
    """An error line inside a stream: typed when its message says what it is."""
    message, kind, _ = message_and_type(obj, 200)
    typed = provider_error(200, message, wire=WIRE, error_type=kind, body=obj)
    cls = StreamError if type(typed) is ProviderError else type(typed)
    return cls(message, error_type=kind, wire=WIRE, body=dict(obj))


# --------------------------------------------------------------------------- encoding


def _thirds(text: str) -> list[str]:
    n = len(text)
    cuts = sorted({0, n // 3, (2 * n) // 3, n})
    return [text[a:b] for a, b in itertools.pairwise(cuts) if text[a:b]]


def encode_stream(reply: Reply, *, request: Request | None = None) -> list[bytes]:
    """A reply as the server's NDJSON stream: text in pieces, each call whole on its own line."""
    whole = encode_response(reply, request=request)
    message = whole.pop("message")
    head: dict[str, Any] = {k: whole.pop(k) for k in ("model", "created_at") if k in whole}
    lines: list[dict[str, Any]] = []

    def line(fields: dict[str, Any]) -> None:
        lines.append({**head, "message": {"role": "assistant", **fields}, "done": False})

    for piece in _thirds(message.pop("thinking", "")):
        line({"content": "", "thinking": piece})
    for piece in _thirds(message.pop("content", "")):
        line({"content": piece})
    for call in message.pop("tool_calls", ()):
        line({"content": "", "tool_calls": [call]})
    message.pop("role", None)
    final = {**head, "message": {"role": "assistant", "content": "", **message}, **whole}
    return [(dumps(obj) + "\n").encode() for obj in (*lines, final)]
