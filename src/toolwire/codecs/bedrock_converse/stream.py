"""Bedrock ConverseStream: the event stream, read incrementally and written back.

Owns `StreamDecoder` (event-stream bytes split anywhere -> `StreamEvent` values, then the whole
`Reply`) and `encode_stream` (a canonical reply as the messages the API sends). Frames are
`toolwire.codecs.eventstream`'s; each event's JSON payload (``messageStart``,
``contentBlockStart``, ``contentBlockDelta``, ``contentBlockStop``, ``messageStop``,
``metadata``, unknown keys such as the padding ``p`` ignored) rebuilds the reply body, which the
whole-reply decoder reads, so a streamed reply equals the same reply sent whole. Blocks without
a start event are made on their first delta; tool input is parsed at ``contentBlockStop``.
Exception messages raise the typed `toolwire.errors` exception. Imports only toolwire's
transcript, errors, events, the codec base, the event-stream framer, `toolwire.codecs.assembly`
and this wire's ``parts`` and ``reply``. Text, reasoning and tool input arriving in many small
deltas cost time linear in their length: fragments are joined once.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from toolwire._json import loads
from toolwire.codecs.assembly import Joins, text_pieces
from toolwire.codecs.base import AWS_RETRIED, dumps, provider_error
from toolwire.codecs.bedrock_converse.parts import WIRE, call_from_block, content_seed, name_map
from toolwire.codecs.bedrock_converse.reply import (
    ERROR_STATUS,
    decode_reply,
    encode_reply,
    error_type_of,
)
from toolwire.codecs.eventstream import EventMessage, EventStreamFramer, encode_message
from toolwire.errors import JSONTextError, ProviderError, StreamError
from toolwire.events import (
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from toolwire.transcript import Reply, Request


def exception_error(message: EventMessage) -> ProviderError:
    """The typed error for an ``exception`` or ``error`` message in the stream."""
    kind = message.header(":exception-type") or message.header(":error-code")
    text = message.header(":error-message") or ""
    body: Any = None
    try:
        body = loads(message.payload, what="a stream exception") if message.payload else None
    except JSONTextError:
        body = message.payload.decode("utf-8", "replace")
    if isinstance(body, Mapping) and isinstance(body.get("message"), str):
        text = body["message"]
    name = error_type_of(kind)  # throttlingException -> ThrottlingException
    status = ERROR_STATUS.get(name or "")
    text = text or f"the stream carried {kind or 'an exception'}"
    if status is None:
        return StreamError(text, error_type=name, wire=WIRE, body=body)
    error = provider_error(status, text, wire=WIRE, error_type=name, body=body)
    if name in AWS_RETRIED:  # a stream error: Bedrock asks to send the request again
        error.retryable = True
    return error


class StreamDecoder:
    """Feed it the response bytes as they arrive; `finish` returns the whole reply."""

    def __init__(self, *, request: Request | None = None) -> None:
        self._nm = name_map(request)
        self._framer = EventStreamFramer()
        self._started = False
        self._blocks: dict[int, dict[str, Any]] = {}
        self._inputs: dict[int, list[str]] = {}
        self._joins = Joins()  # text and reasoning fragments, joined when the stream ends
        self._calls: dict[int, int] = {}
        self._stop: dict[str, Any] | None = None
        self._meta: dict[str, Any] = {}
        self._error: ProviderError | None = None

    def feed(self, data: bytes) -> list[StreamEvent]:
        if self._error is not None:
            raise self._error
        out: list[StreamEvent] = []
        try:
            for message in self._framer.feed(data):
                self._message(message, out)
        except ProviderError as exc:
            self._error = exc
            raise
        return out

    def _fail(self, text: str) -> StreamError:
        return StreamError(text, wire=WIRE)

    def _message(self, message: EventMessage, out: list[StreamEvent]) -> None:
        kind = message.header(":message-type")
        if kind in ("exception", "error"):
            raise exception_error(message)
        event = message.header(":event-type")
        try:
            payload = loads(message.payload, what=f"a {event} event") if message.payload else {}
        except JSONTextError as exc:
            raise self._fail(str(exc)) from None
        if not isinstance(payload, Mapping):
            raise self._fail(f"a {event} event is not a JSON object")
        if event == "messageStart":
            self._started = True
        elif event in ("contentBlockStart", "contentBlockDelta", "contentBlockStop"):
            if not self._started:
                raise self._fail(f"{event} came before messageStart")
            index = payload.get("contentBlockIndex")
            if type(index) is not int or index < 0:
                raise self._fail(f"{event} without a contentBlockIndex")
            if event == "contentBlockStart":
                self._start(index, payload.get("start"), out)
            elif event == "contentBlockDelta":
                self._delta(index, payload.get("delta"), out)
            else:
                self._block_stop(index, out)
        elif event == "messageStop":
            self._stop = {k: v for k, v in payload.items() if k != "p"}
        elif event == "metadata":
            self._meta.update({k: v for k, v in payload.items() if k != "p"})
        # events added later are ignored

    def _start(self, index: int, start: Any, out: list[StreamEvent]) -> None:
        if not isinstance(start, Mapping) or index in self._blocks:
            raise self._fail(f"contentBlockStart {index} has no start or came twice")
        tool = start.get("toolUse")
        if isinstance(tool, Mapping):
            value = {k: v for k, v in tool.items()}
            self._blocks[index] = {"toolUse": value}
            self._inputs[index] = []
            if value.get("type") == "server_tool_use":
                return  # the provider runs it: no call for the client
            ordinal = self._calls[index] = len(self._calls)
            out.append(ToolCallStarted(index=ordinal, id=str(value.get("toolUseId") or ""),
                                       name=self._nm.user(str(value.get("name") or ""))))
        else:
            self._blocks[index] = copy.deepcopy(dict(start))

    def _delta(self, index: int, delta: Any, out: list[StreamEvent]) -> None:
        if not isinstance(delta, Mapping):
            raise self._fail(f"contentBlockDelta {index} has no delta")
        block = self._blocks.setdefault(index, {})
        text = delta.get("text")
        if isinstance(text, str):
            self._joins.add(block, "text", text)
            if text:
                out.append(TextDelta(text=text))
        tool = delta.get("toolUse")
        if isinstance(tool, Mapping):
            piece = tool.get("input")
            if index not in self._inputs or not isinstance(piece, str):
                raise self._fail(f"tool input for block {index}, which is not a tool call")
            self._inputs[index].append(piece)
            if piece and index in self._calls:
                out.append(ToolCallDelta(index=self._calls[index], fragment=piece))
        result = delta.get("toolResult")
        if isinstance(result, list):  # a server tool's result, in pieces
            value = block.setdefault("toolResult", {})
            content = value.setdefault("content", []) if isinstance(value, dict) else None
            if not isinstance(content, list):
                raise self._fail(f"block {index} has a tool result that is not an object")
            for item in result:
                if (isinstance(item, Mapping) and isinstance(item.get("text"), str) and content
                        and isinstance(content[-1].get("text"), str) and len(item) == 1):
                    content[-1]["text"] += item["text"]
                else:
                    content.append(copy.deepcopy(dict(item)) if isinstance(item, Mapping)
                                   else item)
        reasoning = delta.get("reasoningContent")
        if isinstance(reasoning, Mapping):
            value = block.setdefault("reasoningContent", {})
            readable = value.setdefault("reasoningText", {}) if isinstance(value, dict) and (
                "text" in reasoning or "signature" in reasoning) else None
            if not isinstance(value, dict) or not isinstance(readable, dict | None):
                raise self._fail(f"block {index} started with reasoning that is not an object")
            if "redactedContent" in reasoning:
                value["redactedContent"] = reasoning["redactedContent"]
            if readable is not None:
                piece = reasoning.get("text")
                if isinstance(piece, str):
                    self._joins.add(readable, "text", piece)
                    if piece:
                        out.append(ReasoningDelta(text=piece))
                sig = reasoning.get("signature")
                if isinstance(sig, str):
                    self._joins.add(readable, "signature", sig)
                readable.setdefault("text", "")

    def _block_stop(self, index: int, out: list[StreamEvent]) -> None:
        pieces = self._inputs.pop(index, None)
        if pieces is None:
            return
        value = self._blocks[index]["toolUse"]
        text = "".join(pieces)
        value["input"] = text if text.strip() else {}
        try:
            if text.strip():
                value["input"] = loads(text)
        except JSONTextError:
            pass  # cut off: decoded as broken arguments
        if index not in self._calls:
            return
        call = call_from_block(value, nm=self._nm, seed="stream", ordinal=self._calls[index],
                               path=("stream", index))
        out.append(ToolCallFinished(index=self._calls[index], call=call))

    def finish(self) -> Reply:
        if self._error is not None:
            raise self._error
        try:
            self._framer.close()
        except StreamError as exc:
            self._error = exc
            raise
        if not self._started or self._stop is None:
            self._error = self._fail("the stream ended before messageStop")
            raise self._error
        if self._inputs:
            self._error = self._fail("the stream ended inside a tool call's input")
            raise self._error
        self._joins.flush()
        content = [self._blocks[i] for i in sorted(self._blocks)]
        body: dict[str, Any] = {"output": {"message": {"role": "assistant",
                                                       "content": content}}}
        body.update(self._stop)
        body.update({k: v for k, v in self._meta.items() if k != "metrics"})
        return decode_reply(body, nm=self._nm)


# --------------------------------------------------------------------------- encoding


def event(name: str, payload: Mapping[str, Any]) -> bytes:
    """One ConverseStream event as an event-stream message."""
    return encode_message({":event-type": name, ":content-type": "application/json",
                           ":message-type": "event"}, dumps(dict(payload)).encode())


def _block_events(index: int, block: Mapping[str, Any]) -> list[bytes]:
    out: list[bytes] = []

    def delta(d: dict[str, Any]) -> None:
        out.append(event("contentBlockDelta", {"contentBlockIndex": index, "delta": d}))

    if "toolUse" in block:
        value = block["toolUse"]
        start = {k: v for k, v in value.items() if k != "input"}
        out.append(event("contentBlockStart", {"contentBlockIndex": index,
                                               "start": {"toolUse": start}}))
        args = value.get("input")
        text = args if isinstance(args, str) else dumps(args if args is not None else {})
        for piece in text_pieces(text):
            delta({"toolUse": {"input": piece}})
    elif "text" in block:
        for piece in text_pieces(str(block["text"])) or [""]:
            delta({"text": piece})
    elif "reasoningContent" in block:
        value = block["reasoningContent"]
        readable = value.get("reasoningText") if isinstance(value, Mapping) else None
        if isinstance(readable, Mapping):
            for piece in text_pieces(str(readable.get("text") or "")) or [""]:
                delta({"reasoningContent": {"text": piece}})
            if "signature" in readable:
                delta({"reasoningContent": {"signature": readable["signature"]}})
        if isinstance(value, Mapping) and "redactedContent" in value:
            delta({"reasoningContent": {"redactedContent": value["redactedContent"]}})
    else:
        out.append(event("contentBlockStart", {"contentBlockIndex": index,
                                               "start": dict(block)}))
    out.append(event("contentBlockStop", {"contentBlockIndex": index}))
    return out


def encode_stream(reply: Reply, *, request: Request | None = None) -> list[bytes]:
    """The reply as ConverseStream sends it: one event-stream message per ``bytes``."""
    body = encode_reply(reply, nm=name_map(request))
    calls = iter(reply.message.tool_calls)
    content = body["output"]["message"]["content"]
    for block in content:  # a call cut off mid-arguments streams its broken text
        call = next(calls, None) if "toolUse" in block and block["toolUse"].get(
            "type") != "server_tool_use" else None
        if call is not None and call.parse_error is not None and call.raw_arguments is not None:
            block["toolUse"]["input"] = call.raw_arguments
    frames = [event("messageStart", {"role": "assistant"})]
    for index, block in enumerate(content):
        frames.extend(_block_events(index, block))
    stop: dict[str, Any] = {"stopReason": body.pop("stopReason")}
    fields = body.pop("additionalModelResponseFields", None)
    if fields is not None:
        stop["additionalModelResponseFields"] = fields
    frames.append(event("messageStop", stop))
    meta = {k: v for k, v in body.items() if k != "output"}
    frames.append(event("metadata", meta))
    return frames


__all__ = ["StreamDecoder", "content_seed", "encode_stream", "event", "exception_error"]
