"""OpenAI Responses streaming: SSE events with ``event:`` names, in both directions.

Owns: `encode_stream` (a reply as the event sequence the API sends), `StreamDecoder` (events
back to stream events and a `Reply`) and `stream_error` (an ``error`` event as a typed error).
Argument deltas are keyed by the item id (``fc_...``), so the decoder maps item ids to output
positions and call ids itself. Reasoning items are taken from ``response.output_item.done``
(the copy in ``.added`` may be incomplete). Imports only the transcript, errors, events,
`toolwire.codecs.base`, `toolwire.codecs.framing` and the Responses `parts` and `reply`; must
not import the wire's request module, transport, client or any vendor SDK.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from typing import Any

from toolwire import _json
from toolwire.codecs.assembly import text_pieces
from toolwire.codecs.base import NameMap, call_id_for, dumps, provider_error, wrong_shape
from toolwire.codecs.framing import SSEEvent, SSEFramer
from toolwire.codecs.openai_responses.parts import (
    WIRE,
    Item,
    call_from_item,
    custom_call_from_item,
    name_map,
    output_text,
)
from toolwire.codecs.openai_responses.reply import decode_response, encode_response
from toolwire.errors import ProviderError, StreamError
from toolwire.events import (
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from toolwire.transcript import Reply, Request

_CALLS = {"function_call": ("arguments", "function_call_arguments"),
          "custom_tool_call": ("input", "custom_tool_call_input")}
"""The items that are a tool call: the field holding their text, and its events' name."""
_DELTAS = {f"response.{event}.delta": kind for kind, (_, event) in _CALLS.items()}
_DONE = {f"response.{event}.done": (kind, field) for kind, (field, event) in _CALLS.items()}
_SLOT = {"arguments": -1, "input": -2}
"""Where a call's text pieces are kept (in place of a content block's index)."""

TERMINAL_EVENTS = frozenset(
    {"response.completed", "response.incomplete", "response.failed", "response.done"}
)

# --------------------------------------------------------------------------- encode


class _Writer:
    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self._seq = itertools.count()

    def emit(self, kind: str, **fields: Any) -> None:
        payload = {"type": kind, "sequence_number": next(self._seq), **fields}
        self.chunks.append(f"event: {kind}\ndata: {dumps(payload)}\n\n".encode())


def encode_stream(reply: Reply, *, request: Request | None = None) -> list[bytes]:
    """The reply as the SSE events the Responses API streams, one event per chunk."""
    final = encode_response(reply, request=request)
    out = _Writer()
    shell = dict(final, status="in_progress", output=[], usage=None, error=None,
                 incomplete_details=None)
    out.emit("response.created", response=shell)
    out.emit("response.in_progress", response=shell)
    for index, item in enumerate(final["output"]):
        _encode_item(out, index, item)
    terminal = {"incomplete": "response.incomplete", "failed": "response.failed"}
    out.emit(terminal.get(final["status"], "response.completed"), response=final)
    return out.chunks


def _encode_item(out: _Writer, index: int, item: Item) -> None:
    kind = item.get("type")
    item_id = str(item.get("id") or "")
    where = {"item_id": item_id, "output_index": index}
    added = dict(item)  # only top-level keys change
    if "status" in added:
        added["status"] = "in_progress"
    content = item.get("content")
    if kind == "message" and isinstance(content, list):
        added["content"] = []
        out.emit("response.output_item.added", output_index=index, item=added)
        for ci, block in enumerate(content):
            _encode_content(out, where, ci, block)
    elif kind in _CALLS:  # a call's argument text, or a custom tool call's input, in pieces
        field, event = _CALLS[kind]
        added[field] = ""
        out.emit("response.output_item.added", output_index=index, item=added)
        text = str(item.get(field) or "")
        for piece in text_pieces(text):
            out.emit(f"response.{event}.delta", **where, delta=piece)
        out.emit(f"response.{event}.done", **where, **(
            {"name": item.get("name")} if kind == "function_call" else {}), **{field: text})
    elif kind == "reasoning":
        added["summary"] = []
        if "content" in added:
            added["content"] = []
        out.emit("response.output_item.added", output_index=index, item=added)
        for si, block in enumerate(item.get("summary") or ()):
            text = str(block.get("text") or "") if isinstance(block, dict) else ""
            empty = {"type": "summary_text", "text": ""}
            out.emit("response.reasoning_summary_part.added", **where, summary_index=si,
                     part=empty)
            for piece in text_pieces(text):
                out.emit("response.reasoning_summary_text.delta", **where, summary_index=si,
                         delta=piece)
            out.emit("response.reasoning_summary_text.done", **where, summary_index=si,
                     text=text)
            out.emit("response.reasoning_summary_part.done", **where, summary_index=si,
                     part=block)
        for ci, block in enumerate(item.get("content") or ()):
            text = str(block.get("text") or "") if isinstance(block, dict) else ""
            for piece in text_pieces(text):
                out.emit("response.reasoning_text.delta", **where, content_index=ci, delta=piece)
            out.emit("response.reasoning_text.done", **where, content_index=ci, text=text)
    else:
        out.emit("response.output_item.added", output_index=index, item=added)
    out.emit("response.output_item.done", output_index=index, item=item)


def _encode_content(out: _Writer, where: dict[str, Any], ci: int, block: Any) -> None:
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "output_text":
        text = str(block.get("text") or "")
        out.emit("response.content_part.added", **where, content_index=ci, part=output_text(""))
        for piece in text_pieces(text):
            out.emit("response.output_text.delta", **where, content_index=ci, delta=piece,
                     logprobs=[])
        out.emit("response.output_text.done", **where, content_index=ci, text=text, logprobs=[])
    elif kind == "refusal":
        text = str(block.get("refusal") or "")
        out.emit("response.content_part.added", **where, content_index=ci,
                 part={"type": "refusal", "refusal": ""})
        for piece in text_pieces(text):
            out.emit("response.refusal.delta", **where, content_index=ci, delta=piece)
        out.emit("response.refusal.done", **where, content_index=ci, refusal=text)
    else:
        out.emit("response.content_part.added", **where, content_index=ci, part=block)
    out.emit("response.content_part.done", **where, content_index=ci, part=block)


# --------------------------------------------------------------------------- decode


def stream_error(payload: Mapping[str, Any]) -> ProviderError:
    """The typed error for an ``error`` event (rate limit, overload, context), else StreamError."""
    inner = payload.get("error")
    err: Mapping[str, Any] = inner if isinstance(inner, dict) else payload
    code, kind = err.get("code"), err.get("type")
    label = code if isinstance(code, str) and code else kind if isinstance(kind, str) else None
    if label == "error":
        label = None
    message = str(err.get("message") or "the stream carried an error event")
    lowered = f"{label or ''} {message}".lower()
    status: int | None = None
    if "rate_limit" in lowered or "rate limit" in lowered:
        status = 429
    elif "overloaded" in lowered or "slow_down" in lowered:
        status = 503
    elif "context" in lowered and ("length" in lowered or "window" in lowered):
        status = 400
    if status is None:
        return StreamError(message, error_type=label, wire=WIRE, body=dict(payload))
    return provider_error(status, message, wire=WIRE, error_type=label, body=dict(payload))


class StreamDecoder:
    """Incremental decoder: feed SSE bytes, get stream events; `finish` gives the Reply."""

    def __init__(self, *, request: Request | None = None) -> None:
        self._request = request
        self._names = name_map(request.tools) if request is not None else NameMap()
        self._framer = SSEFramer()
        self._meta: dict[str, Any] = {}
        self._final: dict[str, Any] | None = None
        self._live: dict[int, Item] = {}
        self._top: int | None = None  # the largest key of _live (kept: a max per event is slow)
        # text and argument fragments by (item index, content index; -1 for arguments), joined
        # once at the end: adding each fragment to a growing string would copy it every time
        self._pieces: dict[tuple[int, int], list[str]] = {}
        self._done: dict[int, Item] = {}
        self._by_id: dict[str, int] = {}
        self._calls: dict[int, int] = {}
        self._summaries: dict[int, set[int]] = {}

    # ------------------------------------------------------------------ public

    def feed(self, data: bytes) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for event in self._framer.feed(data):
            self._event(event, out)
        return out

    def finish(self) -> Reply:
        for event in self._framer.close():
            self._event(event, [])
        if self._final is None:
            raise StreamError("the stream ended before the response was complete", wire=WIRE)
        body = {**self._meta, **self._final}
        given = body.get("output")
        final_out = [i for i in given if isinstance(i, dict)] if isinstance(given, list) else []
        # The completed response is the truth where it lists its output: it is what the server
        # keeps and will accept back (servers re-issue encrypted reasoning and rotate item ids
        # there, e.g. OpenRouter's rs_tmp_* ids), and it is what the same reply sent whole
        # holds. Items only the events carried fill the places it leaves out (some servers
        # send an empty output). The indexes are those the events really used: a server's
        # output_index is not trusted to be small.
        self._join_pieces()
        indexes = sorted(set(self._done) | set(self._live) | set(range(len(final_out))))
        output: list[Item] = []
        for index in indexes:
            item = final_out[index] if 0 <= index < len(final_out) else self._done.get(index)
            if item is None:
                item = self._live.get(index)
            if item is not None:
                output.append(item)
        body["output"] = output
        return decode_response(body, request=self._request)

    # ------------------------------------------------------------------ events

    def _event(self, sse: SSEEvent, out: list[StreamEvent]) -> None:
        data = sse.data.strip()
        if not data or data == "[DONE]":
            return
        try:
            payload = _json.loads(data)
        except json.JSONDecodeError as exc:
            raise StreamError(f"a stream event is not JSON: {exc.msg}", wire=WIRE) from None
        if not isinstance(payload, dict):
            return
        kind = payload.get("type") or sse.event or ""
        if type(kind) is not str:
            raise StreamError(str(wrong_shape("an event's type", "text", kind)), wire=WIRE)
        if kind == "error":
            raise stream_error(payload)
        if kind in TERMINAL_EVENTS:
            response = payload.get("response")
            self._final = dict(response) if isinstance(response, dict) else {}
        elif kind in ("response.created", "response.in_progress", "response.queued"):
            response = payload.get("response")
            if isinstance(response, dict):
                self._meta = {k: v for k, v in response.items() if k != "output"}
        elif kind == "response.output_item.added":
            self._added(payload, out)
        elif kind == "response.output_item.done":
            self._item_done(payload, out)
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            self._text_delta(payload, kind, out)
        elif kind in _DELTAS:
            self._args_delta(payload, out, _DELTAS[kind])
        elif kind in _DONE:
            index, (item_type, field) = self._index(payload), _DONE[kind]
            if isinstance(payload.get(field), str):
                self._pieces.pop((index, _SLOT[field]), None)  # the whole text replaces them
                self._item(index, {"type": item_type})[field] = payload[field]
        elif kind in ("response.reasoning_summary_part.added",
                      "response.reasoning_summary_text.delta"):
            self._summary(payload, out)
        elif kind == "response.reasoning_text.delta":
            delta = payload.get("delta")
            if isinstance(delta, str) and delta:
                out.append(ReasoningDelta(text=delta))

    def _index(self, payload: Mapping[str, Any]) -> int:
        item_id = payload.get("item_id")
        if isinstance(item_id, str) and item_id in self._by_id:
            return self._by_id[item_id]
        index = payload.get("output_index")
        if isinstance(index, int):
            return index
        return 0 if self._top is None else self._top

    def _item(self, index: int, new: Item) -> Item:
        """The live item at ``index``; ``new`` when there is none yet."""
        item = self._live.get(index)
        if item is None:
            item = self._live[index] = new
            if self._top is None or index > self._top:
                self._top = index
        return item

    def _seed(self) -> str:
        rid = self._meta.get("id")
        return rid if isinstance(rid, str) and rid else ""

    def _start_call(self, index: int, item: Mapping[str, Any], out: list[StreamEvent]) -> int:
        if index in self._calls:
            return self._calls[index]
        number = self._calls[index] = len(self._calls)
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            call_id = call_id_for(self._seed(), number)
        name = self._names.user(str(item.get("name") or ""))
        out.append(ToolCallStarted(index=number, id=call_id, name=name))
        return number

    def _added(self, payload: Mapping[str, Any], out: list[StreamEvent]) -> None:
        item = payload.get("item")
        if not isinstance(item, dict):
            return
        index = payload.get("output_index")
        if not isinstance(index, int):
            index = 0 if self._top is None else self._top + 1
        self._live.pop(index, None)
        self._item(index, item)  # parsed from this event alone: nothing else holds it
        if isinstance(item.get("id"), str):
            self._by_id[item["id"]] = index
        if item.get("type") in _CALLS:
            self._start_call(index, item, out)

    def _item_done(self, payload: Mapping[str, Any], out: list[StreamEvent]) -> None:
        item = payload.get("item")
        if not isinstance(item, dict):
            return
        index = payload.get("output_index")
        if not isinstance(index, int):
            index = self._index({"item_id": item.get("id")})
        self._done[index] = item
        if item.get("type") not in _CALLS:
            return
        number = self._start_call(index, item, out)
        read = call_from_item if item["type"] == "function_call" else custom_call_from_item
        call = read(item, self._names, index, seed=self._seed(), call_index=number)
        out.append(ToolCallFinished(index=number, call=call))

    def _text_delta(self, payload: Mapping[str, Any], kind: str, out: list[StreamEvent]) -> None:
        delta = payload.get("delta")
        if not isinstance(delta, str) or not delta:
            return
        index = self._index(payload)
        item = self._item(index, {"type": "message", "content": []})
        content = item.get("content")
        if not isinstance(content, list):
            content = item["content"] = []
        ci = payload.get("content_index")
        ci = ci if isinstance(ci, int) else max(len(content) - 1, 0)
        if not 0 <= ci <= len(content):  # an index from the wire: at most one new block
            ci = len(content)
        if ci == len(content):
            refusal = kind == "response.refusal.delta"
            content.append({"type": "refusal", "refusal": ""} if refusal else output_text(""))
        pieces = self._pieces.get((index, ci))
        if pieces is None:
            block = content[ci]
            if not isinstance(block, dict):
                raise StreamError(str(wrong_shape(f"output[{index}].content[{ci}]", "an object",
                                                  block)), wire=WIRE)
            key = "refusal" if block.get("type") == "refusal" else "text"
            pieces = self._pieces[(index, ci)] = [str(block.get(key) or "")]
        pieces.append(delta)
        out.append(TextDelta(text=delta))

    def _args_delta(self, payload: Mapping[str, Any], out: list[StreamEvent],
                    item_type: str = "function_call") -> None:
        delta = payload.get("delta")
        index = self._index(payload)
        field = _CALLS[item_type][0]
        item = self._item(index, {"type": item_type, field: ""})
        number = self._start_call(index, item, out)
        if isinstance(delta, str) and delta:
            pieces = self._pieces.get((index, _SLOT[field]))
            if pieces is None:
                pieces = self._pieces[(index, _SLOT[field])] = [str(item.get(field) or "")]
            pieces.append(delta)
            out.append(ToolCallDelta(index=number, fragment=delta))

    def _join_pieces(self) -> None:
        """Put the joined fragments into the items they belong to."""
        for (index, ci), pieces in self._pieces.items():
            item = self._live.get(index)
            if item is None:
                continue
            if ci < 0:
                item["arguments" if ci == _SLOT["arguments"] else "input"] = "".join(pieces)
                continue
            content = item.get("content")
            if isinstance(content, list) and ci < len(content) and isinstance(content[ci], dict):
                block = content[ci]
                block["refusal" if block.get("type") == "refusal" else "text"] = "".join(pieces)
        self._pieces.clear()

    def _summary(self, payload: Mapping[str, Any], out: list[StreamEvent]) -> None:
        seen = self._summaries.setdefault(self._index(payload), set())
        si = payload.get("summary_index")
        si = si if isinstance(si, int) else 0
        if si not in seen:
            if seen:
                out.append(ReasoningDelta(text="\n\n"))
            seen.add(si)
        delta = payload.get("delta")
        if isinstance(delta, str) and delta:
            out.append(ReasoningDelta(text=delta))
