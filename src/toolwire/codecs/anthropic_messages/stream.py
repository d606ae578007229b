"""Anthropic Messages: the server-sent event stream, read incrementally and written back.

Owns `StreamDecoder` (bytes split anywhere -> `StreamEvent` values, then the whole `Reply`) and
`encode_stream` (a canonical reply as the event sequence the API sends). The decoder rebuilds
the message the way the API's own snapshot works (blocks by index, tool input concatenated and
parsed at ``content_block_stop``, cumulative usage overwritten by ``message_delta``) and hands
it to the whole-reply decoder, so a streamed reply equals the same reply sent whole. Error
events raise the typed `toolwire.errors` exception. Imports only toolwire's transcript, errors,
events, codec helpers and this wire's ``parts`` and ``reply``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from toolwire import _json
from toolwire.codecs.anthropic_messages.parts import WIRE, call_from_block, name_map, reply_seed
from toolwire.codecs.anthropic_messages.reply import ERROR_STATUS, decode_reply, encode_reply
from toolwire.codecs.assembly import text_pieces
from toolwire.codecs.base import call_id_for, dumps, provider_error
from toolwire.codecs.framing import SSEEvent, SSEFramer
from toolwire.errors import ProviderError, StreamError
from toolwire.events import (
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from toolwire.transcript import Reply, Request, ToolCallPart, read_arguments

_INPUT_BLOCKS = ("tool_use", "server_tool_use")
# What a message_delta's usage holds; the rest (service tier, cache breakdown) only comes
# with message_start.
_DELTA_USAGE = frozenset({"input_tokens", "output_tokens", "cache_creation_input_tokens",
                          "cache_read_input_tokens", "output_tokens_details", "server_tool_use"})


def stream_error(payload: Mapping[str, Any]) -> ProviderError:
    """The typed error for an ``error`` event; `StreamError` when its type is unknown."""
    err = payload.get("error")
    err = err if isinstance(err, Mapping) else {}
    kind = err.get("type")
    message = str(err.get("message") or "the stream carried an error event")
    status = ERROR_STATUS.get(kind) if isinstance(kind, str) else None
    if status is None:
        return StreamError(message, error_type=kind if isinstance(kind, str) else None,
                           wire=WIRE, body=dict(payload))
    return provider_error(status, message, wire=WIRE, error_type=kind, body=dict(payload))


class StreamDecoder:
    """Feed it the response bytes as they arrive; `finish` returns the whole reply."""

    def __init__(self, *, request: Request | None = None) -> None:
        self._request = request
        self._nm = name_map(request)
        self._framer = SSEFramer()
        self._message: dict[str, Any] | None = None
        self._blocks: dict[int, dict[str, Any]] = {}
        self._head: list[dict[str, Any]] = []
        """Blocks that came whole inside ``message_start`` (a call made by server-side code
        arrives that way), kept before the blocks the stream builds, in their order."""
        self._inputs: dict[int, list[str]] = {}
        # text, thinking and signature fragments by block index and key, joined when the block
        # stops: adding each to a growing string would copy the text every time
        self._texts: dict[int, dict[str, list[str]]] = {}
        self._calls: dict[int, int] = {}
        self._head_calls = 0
        self._stopped = False
        self._error: ProviderError | None = None

    # ---------------------------------------------------------------- feeding

    def feed(self, data: bytes) -> list[StreamEvent]:
        if self._error is not None:
            raise self._error
        out: list[StreamEvent] = []
        for event in self._framer.feed(data):
            self._event(event, out)
        return out

    def _event(self, event: SSEEvent, out: list[StreamEvent]) -> None:
        text = event.data.strip()
        if not text or text == "[DONE]":
            return
        try:
            payload = _json.loads(text)
        except json.JSONDecodeError as exc:
            self._fail(StreamError(f"an event is not JSON: {text[:200]!r} ({exc.msg})", wire=WIRE))
        if not isinstance(payload, Mapping):
            return
        kind = payload.get("type") or event.event
        if kind == "error":
            self._fail(stream_error(payload))
        elif kind == "message_start":
            message = payload.get("message")
            self._message = copy.deepcopy(dict(message)) if isinstance(message, Mapping) else {}
            self._take_head(out)
        elif kind == "content_block_start":
            self._start(payload, out)
        elif kind == "content_block_delta":
            self._delta(payload, out)
        elif kind == "content_block_stop":
            self._stop(payload, out)
        elif kind == "message_delta":
            self._message_delta(payload)
        elif kind == "message_stop":
            self._stopped = True
        # ping and event types added later are ignored

    def _take_head(self, out: list[StreamEvent]) -> None:
        """Keep what ``message_start`` already holds, whatever its type, and announce its calls.

        Such blocks are complete: no delta or stop event follows for them, so a call among
        them is started and finished here, before any block the stream goes on to build.
        """
        assert self._message is not None
        content = self._message.pop("content", None)
        if not isinstance(content, list):
            return
        self._head = [block for block in content if isinstance(block, dict)]
        seed = reply_seed(self._message)
        for block in self._head:
            if block.get("type") != "tool_use":
                continue
            ordinal = len(self._calls) + self._head_calls
            self._head_calls += 1
            if not block.get("id"):
                block["id"] = _call_id(self._message, ordinal)
            if not isinstance(block.get("input"), Mapping | str):
                block["input"] = {}
            call = call_from_block(block, nm=self._nm, seed=seed, ordinal=ordinal)
            out.append(ToolCallStarted(index=ordinal, id=call.id, name=call.name))
            out.append(ToolCallFinished(index=ordinal, call=call))

    def _fail(self, error: ProviderError) -> Any:
        self._error = error
        raise error

    def _snapshot(self) -> dict[str, Any]:
        if self._message is None:
            self._fail(StreamError("a content event came before message_start", wire=WIRE))
        assert self._message is not None
        return self._message

    def _block(self, payload: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        index = payload.get("index")
        if not isinstance(index, int) or index not in self._blocks:
            self._fail(StreamError(f"an event names content block {index!r}, which never "
                                   "started", wire=WIRE))
        assert isinstance(index, int)
        return index, self._blocks[index]

    def _start(self, payload: Mapping[str, Any], out: list[StreamEvent]) -> None:
        message = self._snapshot()
        index, raw = payload.get("index"), payload.get("content_block")
        if not isinstance(index, int) or not isinstance(raw, Mapping):
            self._fail(StreamError("content_block_start without an index or a block", wire=WIRE))
        assert isinstance(index, int) and isinstance(raw, Mapping)
        block = copy.deepcopy(dict(raw))
        self._join_texts(index)  # a block that starts again at a taken index replaces it
        self._blocks[index] = block
        if block.get("type") in _INPUT_BLOCKS:
            self._inputs[index] = []
        if block.get("type") == "tool_use":
            ordinal = len(self._calls) + self._head_calls
            self._calls[index] = ordinal
            if not block.get("id"):
                block["id"] = _call_id(message, ordinal)
            out.append(ToolCallStarted(index=ordinal, id=str(block["id"]),
                                       name=self._nm.user(str(block.get("name") or ""))))

    def _delta(self, payload: Mapping[str, Any], out: list[StreamEvent]) -> None:
        index, block = self._block(payload)
        delta = payload.get("delta")
        if not isinstance(delta, Mapping):
            return
        kind = delta.get("type")
        if kind == "text_delta":
            piece = self._add(index, block, "text", delta)
            if piece:
                out.append(TextDelta(text=piece))
        elif kind == "thinking_delta":
            piece = self._add(index, block, "thinking", delta)
            if piece:
                out.append(ReasoningDelta(text=piece))
        elif kind == "signature_delta":
            self._add(index, block, "signature", delta)
        elif kind == "input_json_delta":
            piece = str(delta.get("partial_json") or "")
            self._inputs.setdefault(index, []).append(piece)
            if piece and index in self._calls:
                out.append(ToolCallDelta(index=self._calls[index], fragment=piece))
        elif kind == "compaction_delta":  # the server's summary, whole or in pieces
            for key in ("content", "encrypted_content"):
                if isinstance(delta.get(key), str):
                    self._add(index, block, key, delta)
        elif kind == "citations_delta":  # the block is our own copy: the list grows in place
            citations = block.get("citations")
            if not isinstance(citations, list):
                citations = block["citations"] = []
            citations.append(delta.get("citation"))

    def _add(self, index: int, block: dict[str, Any], key: str, delta: Mapping[str, Any]) -> str:
        """Keep the ``key`` fragment of ``delta`` for ``block``; the fragment."""
        piece = str(delta.get(key) or "")
        fields = self._texts.get(index)
        if fields is None:
            fields = self._texts[index] = {}
        pieces = fields.get(key)
        if pieces is None:
            pieces = fields[key] = [str(block.get(key) or "")]
        pieces.append(piece)
        return piece

    def _join_texts(self, only: int | None = None) -> None:
        """Put the joined fragments into their blocks (of block ``only``, or of every block)."""
        for index in list(self._texts) if only is None else [only]:
            for key, pieces in self._texts.pop(index, {}).items():
                self._blocks[index][key] = "".join(pieces)

    def _stop(self, payload: Mapping[str, Any], out: list[StreamEvent]) -> None:
        index, block = self._block(payload)
        self._join_texts(index)
        pieces = self._inputs.pop(index, None)
        if pieces is not None:
            text = "".join(pieces)
            if text.strip():
                try:
                    block["input"] = read_arguments(text)
                except json.JSONDecodeError:  # read once: the steps after reuse the failure
                    block["input"] = text  # cut off: decoded as broken arguments
            elif not isinstance(block.get("input"), Mapping):
                block["input"] = {}
        if index in self._calls:
            ordinal = self._calls[index]
            seed = reply_seed(self._snapshot())
            call: ToolCallPart = call_from_block(block, nm=self._nm, seed=seed, ordinal=ordinal)
            out.append(ToolCallFinished(index=ordinal, call=call))

    def _message_delta(self, payload: Mapping[str, Any]) -> None:
        message = self._snapshot()
        delta = payload.get("delta")
        if isinstance(delta, Mapping):
            message.update(copy.deepcopy(dict(delta)))
        usage = payload.get("usage")
        if isinstance(usage, Mapping):
            totals = message.get("usage")  # our own copy (of message_start or a delta)
            if not isinstance(totals, dict):
                totals = message["usage"] = {}
            # The numbers are running totals: overwrite, never add.
            totals.update({k: copy.deepcopy(v) for k, v in usage.items() if v is not None})
        for key, value in payload.items():
            if key not in ("type", "delta", "usage"):
                message[key] = copy.deepcopy(value)

    # ---------------------------------------------------------------- finishing

    def finish(self) -> Reply:
        if self._error is not None:
            raise self._error
        rest: list[StreamEvent] = []
        for event in self._framer.close():
            self._event(event, rest)
        if self._message is None or not self._stopped:
            self._fail(StreamError("the stream ended before message_stop", wire=WIRE))
        assert self._message is not None
        if self._inputs:
            self._fail(StreamError("the stream ended inside a content block", wire=WIRE))
        self._join_texts()
        body = dict(self._message)
        body["content"] = [*self._head, *(self._blocks[i] for i in sorted(self._blocks))]
        return decode_reply(body, nm=self._nm)


def _call_id(message: Mapping[str, Any], ordinal: int) -> str:
    seed = message.get("id")
    return call_id_for(seed if isinstance(seed, str) and seed else "stream", ordinal)


# --------------------------------------------------------------------------- encoding


def _sse(payload: dict[str, Any]) -> bytes:
    return f"event: {payload['type']}\ndata: {dumps(payload)}\n\n".encode()


def _block_events(index: int, block: dict[str, Any]) -> list[dict[str, Any]]:
    kind = block.get("type")
    events: list[dict[str, Any]] = []

    def delta(d: dict[str, Any]) -> None:
        events.append({"type": "content_block_delta", "index": index, "delta": d})

    start = dict(block)
    if kind == "text":
        start["text"] = ""
        citations = start.pop("citations", None)
        if isinstance(citations, list):
            start["citations"] = []
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        for citation in citations if isinstance(citations, list) else []:
            delta({"type": "citations_delta", "citation": citation})
        for piece in text_pieces(str(block.get("text") or "")):
            delta({"type": "text_delta", "text": piece})
    elif kind == "thinking":
        start["thinking"] = ""
        if "signature" in start:
            start["signature"] = ""
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        for piece in text_pieces(str(block.get("thinking") or "")):
            delta({"type": "thinking_delta", "thinking": piece})
        if block.get("signature"):
            delta({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "compaction":
        said = {k: block[k] for k in ("content", "encrypted_content") if block.get(k)}
        start.update(dict.fromkeys(said))
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        if said:
            delta({"type": "compaction_delta", **said})
    elif kind in _INPUT_BLOCKS:
        value = block.get("input")
        start["input"] = {}
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        text = value if isinstance(value, str) else dumps(value if value is not None else {})
        delta({"type": "input_json_delta", "partial_json": ""})
        for piece in text_pieces(text if text != "{}" else ""):
            delta({"type": "input_json_delta", "partial_json": piece})
    else:
        events.append({"type": "content_block_start", "index": index, "content_block": start})
    events.append({"type": "content_block_stop", "index": index})
    return events


def encode_stream(reply: Reply, *, request: Request | None = None) -> list[bytes]:
    """The reply as the API streams it: one ``bytes`` per server-sent event."""
    return [_sse(e) for e in _stream_events(reply, request)]


def encode_tail(reply: Reply, count: int, *, request: Request | None = None) -> list[bytes]:
    """The last ``count`` events of `encode_stream`, only those written out (a stream sent
    as it came ends with them)."""
    events = _stream_events(reply, request)
    return [_sse(e) for e in events[len(events) - count:]]


def _stream_events(reply: Reply, request: Request | None) -> list[dict[str, Any]]:
    body = encode_reply(reply, nm=name_map(request), model=request.model if request else "")
    _restore_broken_inputs(reply, body)
    usage = body.pop("usage")
    message = {k: v for k, v in body.items() if k not in ("content", "stop_reason",
                                                          "stop_sequence", "stop_details")}
    message.update({"content": [], "stop_reason": None, "stop_sequence": None,
                    "usage": {**usage, "output_tokens": min(1, usage["output_tokens"])}})
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    for index, block in enumerate(body["content"]):
        events.extend(_block_events(index, block))
        if index == 0:
            events.append({"type": "ping"})
    delta: dict[str, Any] = {"stop_reason": body["stop_reason"],
                             "stop_sequence": body.get("stop_sequence")}
    if "stop_details" in body:
        delta["stop_details"] = body["stop_details"]
    running = {k: v for k, v in usage.items() if k in _DELTA_USAGE}
    events.append({"type": "message_delta", "delta": delta, "usage": running})
    events.append({"type": "message_stop"})
    return events


def _restore_broken_inputs(reply: Reply, body: dict[str, Any]) -> None:
    """A call cut off mid-arguments streams its broken text, as the API would have sent it."""
    calls = iter(reply.message.tool_calls)
    for block in body["content"]:
        if block.get("type") != "tool_use":
            continue
        call = next(calls, None)
        if call is not None and call.parse_error is not None and call.raw_arguments is not None:
            block["input"] = call.raw_arguments
