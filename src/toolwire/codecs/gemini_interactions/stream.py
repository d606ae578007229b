"""gemini-interactions streaming: server-sent events, each naming its ``event_type``, in both
directions.

Owns: `encode_stream` (a reply as the events the API streams: ``interaction.created``, then per
step ``step.start``, ``step.delta``s and ``step.stop``, then ``interaction.completed``),
`StreamDecoder` (events back to stream events and a `Reply`) and `stream_error` (an ``error``
event as a typed error). Every event carries an ``event_id``; a stream taken up again after a
break (``GET /v1beta/interactions/{id}?stream=true&last_event_id=...``) repeats nothing the
decoder has seen, and `StreamDecoder.resume_point` says where to take it up. Imports only
the transcript, errors, events, the shared codec modules (`toolwire.codecs.base`,
`toolwire.codecs.framing`, `toolwire.codecs.assembly`) and this wire's `parts` and `reply`;
must not import the wire's request module, transport, client or any vendor SDK.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from typing import Any

from toolwire.codecs.assembly import text_pieces
from toolwire.codecs.base import dumps, provider_error, status_in_words, wrong_shape
from toolwire.codecs.framing import SSEEvent, SSEFramer
from toolwire.codecs.gemini_interactions.parts import (
    MEDIA_BLOCKS,
    WIRE,
    decode_call,
)
from toolwire.codecs.gemini_interactions.reply import decode_response, encode_response
from toolwire.codecs.google_shared import event_json, request_names
from toolwire.errors import ProviderError, StreamError
from toolwire.events import (
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from toolwire.transcript import Reply, Request, read_arguments

# --------------------------------------------------------------------------- encode


class _Writer:
    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self._seq = itertools.count(1)

    def emit(self, kind: str, **fields: Any) -> None:
        payload = {"event_type": kind, **fields, "event_id": f"evt_{next(self._seq)}"}
        self.chunks.append(f"event: {kind}\ndata: {dumps(payload)}\n\n".encode())


def encode_stream(reply: Reply, *, request: Request | None = None) -> list[bytes]:
    """The reply as the server-sent events this API streams, one event per chunk."""
    final = encode_response(reply, request=request)
    out = _Writer()
    head = {k: final[k] for k in ("id", "model") if k in final}
    out.emit("interaction.created", interaction={**head, "status": "in_progress"})
    for index, step in enumerate(_one_block_each(final["steps"])):
        _encode_step(out, index, step)
    done = {k: v for k, v in final.items() if k != "steps"}
    out.emit("interaction.completed", interaction=done)
    return out.chunks


def _one_block_each(steps: list[Any]) -> list[Any]:
    """The steps with each ``model_output`` block in a step of its own: text deltas do not
    say which block they extend, so two texts in one step would stream as one."""
    out: list[Any] = []
    for step in steps:
        content = step.get("content") if step.get("type") == "model_output" else None
        if isinstance(content, list) and len(content) > 1:
            out.extend({**step, "content": [block]} for block in content)
        else:
            out.append(step)
    return out


def _encode_step(out: _Writer, index: int, step: Mapping[str, Any]) -> None:
    kind = step.get("type")
    if kind == "thought":
        out.emit("step.start", index=index, step={"type": "thought"})
        for block in step.get("summary") or ():
            if isinstance(block, Mapping) and block.get("type") == "text":
                for piece in text_pieces(str(block.get("text") or "")):
                    out.emit("step.delta", index=index, delta={
                        "type": "thought_summary", "content": {"type": "text", "text": piece}})
            else:
                out.emit("step.delta", index=index,
                         delta={"type": "thought_summary", "content": block})
        if step.get("signature"):
            out.emit("step.delta", index=index,
                     delta={"type": "thought_signature", "signature": step["signature"]})
    elif kind == "model_output":
        out.emit("step.start", index=index, step={"type": "model_output"})
        for block in step.get("content") or ():
            if isinstance(block, Mapping) and block.get("type") == "text":
                for piece in text_pieces(str(block.get("text") or "")):
                    out.emit("step.delta", index=index, delta={"type": "text", "text": piece})
            else:
                out.emit("step.delta", index=index, delta=block)
    elif kind == "function_call":
        out.emit("step.start", index=index, step={**step, "arguments": {}})
        for piece in text_pieces(dumps(step.get("arguments") or {})):
            out.emit("step.delta", index=index,
                     delta={"type": "arguments_delta", "arguments": piece})
    else:
        out.emit("step.start", index=index, step=dict(step))
    out.emit("step.stop", index=index)


# --------------------------------------------------------------------------- decode


def stream_error(payload: Mapping[str, Any]) -> ProviderError:
    """The typed error for an ``error`` event."""
    inner = payload.get("error")
    err: Mapping[str, Any] = inner if isinstance(inner, Mapping) else payload
    code = err.get("code")
    label = str(code) if isinstance(code, str | int) and not isinstance(code, bool) else None
    message = str(err.get("message") or "the stream carried an error event")
    status = code if isinstance(code, int) and not isinstance(code, bool) else \
        status_in_words(f"{label or ''} {message}")
    if status == 500 and not label:
        return StreamError(message, wire=WIRE, body=dict(payload))
    return provider_error(status, message, wire=WIRE, error_type=label, body=dict(payload))


class StreamDecoder:
    """Incremental decoder: feed SSE bytes, get stream events; `finish` gives the Reply."""

    def __init__(self, *, request: Request | None = None) -> None:
        self._request = request
        self._names = request_names(request)
        self._framer = SSEFramer()
        self._meta: dict[str, Any] = {}
        self._final: dict[str, Any] | None = None
        self._steps: dict[int, dict[str, Any]] = {}
        self._text: dict[tuple[int, int], list[str]] = {}
        self._summary: dict[int, list[str]] = {}
        self._args: dict[int, list[str]] = {}
        self._calls: dict[int, int] = {}
        self._seen: set[str] = set()
        self.last_event_id: str | None = None

    @property
    def resume_point(self) -> tuple[str, str] | None:
        """The interaction's id and the last event seen: where a broken stream is taken up."""
        iid = self._meta.get("id")
        if isinstance(iid, str) and iid and self.last_event_id:
            return iid, self.last_event_id
        return None

    def drop_partial(self) -> None:
        """Forget the bytes of an event cut off by a break: the stream taken up again sends
        it whole."""
        self._framer = SSEFramer()

    def feed(self, data: bytes) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for event in self._framer.feed(data):
            self._event(event, out)
        return out

    def finish(self) -> Reply:
        for event in self._framer.close():
            self._event(event, [])
        if self._final is None:
            raise StreamError("the stream ended before the interaction was complete", wire=WIRE)
        body = {**self._meta, **self._final}
        given = body.get("steps")
        if not (isinstance(given, list) and given):
            self._join()
            body["steps"] = [self._steps[i] for i in sorted(self._steps)]
        return decode_response(body, request=self._request)

    # ------------------------------------------------------------------ events

    def _event(self, sse: SSEEvent, out: list[StreamEvent]) -> None:
        payload = event_json(sse.data, WIRE)
        if not isinstance(payload, dict):
            return
        event_id = payload.get("event_id")
        if isinstance(event_id, str) and event_id:
            if event_id in self._seen:
                return  # repeated by a stream taken up again
            self._seen.add(event_id)
            self.last_event_id = event_id
        kind = payload.get("event_type") or sse.event or ""
        if type(kind) is not str:
            raise StreamError(str(wrong_shape("an event's event_type", "text", kind)), wire=WIRE)
        if kind == "error":
            raise stream_error(payload)
        if kind in ("interaction.created", "interaction.completed"):
            interaction = payload.get("interaction")
            if not isinstance(interaction, dict):
                raise StreamError(str(wrong_shape(f"{kind}.interaction", "an object",
                                                  interaction)), wire=WIRE)
            if kind == "interaction.created":
                self._meta = {k: v for k, v in interaction.items() if k != "steps"}
            else:
                self._final = dict(interaction)
        elif kind == "interaction.status_update":
            status = payload.get("status")
            if isinstance(status, str):
                self._meta["status"] = status
        elif kind in ("step.start", "step.delta", "step.stop"):
            index = payload.get("index")
            if not isinstance(index, int) or isinstance(index, bool) or index < 0:
                raise StreamError(str(wrong_shape(f"{kind}.index", "a step index", index)),
                                  wire=WIRE)
            if kind == "step.start":
                self._start(index, payload.get("step"), out)
            elif kind == "step.delta":
                self._delta(index, payload.get("delta"), out)
            else:
                self._stop(index, out)

    def _step(self, index: int, kind: str) -> dict[str, Any]:
        step = self._steps.get(index)
        if step is None:
            step = self._steps[index] = {"type": kind}
        return step

    def _start(self, index: int, raw: Any, out: list[StreamEvent]) -> None:
        if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
            raise StreamError(str(wrong_shape("step.start.step", "a step", raw)), wire=WIRE)
        self._steps[index] = dict(raw)
        if raw["type"] == "function_call":
            self._call_number(index, out)

    def _call_number(self, index: int, out: list[StreamEvent]) -> int:
        number = self._calls.get(index)
        if number is None:
            number = self._calls[index] = len(self._calls)
            step = self._step(index, "function_call")
            call = decode_call(step, self._names, str(self._meta.get("id") or ""), number)
            out.append(ToolCallStarted(index=number, id=call.id, name=call.name))
        return number

    def _delta(self, index: int, delta: Any, out: list[StreamEvent]) -> None:
        if not isinstance(delta, dict) or not isinstance(delta.get("type"), str):
            raise StreamError(str(wrong_shape("step.delta.delta", "a delta", delta)), wire=WIRE)
        kind = delta["type"]
        if kind == "text":
            text = delta.get("text")
            step = self._step(index, "model_output")
            content = step.setdefault("content", [])
            if not isinstance(content, list):
                content = step["content"] = []
            if not content or not isinstance(content[-1], dict) \
                    or content[-1].get("type") != "text":
                content.append({"type": "text", "text": ""})
            if isinstance(text, str) and text:
                self._text.setdefault((index, len(content) - 1), []).append(text)
                out.append(TextDelta(text=text))
        elif kind == "thought_summary":
            block = delta.get("content")
            text = block.get("text") if isinstance(block, dict) else None
            self._step(index, "thought")
            if isinstance(text, str) and text:
                self._summary.setdefault(index, []).append(text)
                out.append(ReasoningDelta(text=text))
        elif kind == "thought_signature":
            self._step(index, "thought")["signature"] = delta.get("signature")
        elif kind == "arguments_delta":
            number = self._call_number(index, out)
            piece = delta.get("arguments")
            if isinstance(piece, str) and piece:
                self._args.setdefault(index, []).append(piece)
                out.append(ToolCallDelta(index=number, fragment=piece))
        elif kind in MEDIA_BLOCKS:
            step = self._step(index, "model_output")
            content = step.setdefault("content", [])
            if isinstance(content, list):
                content.append(dict(delta))
        else:  # a server tool's step: its delta holds the step's fields
            step = self._step(index, kind)
            step.update({k: v for k, v in delta.items() if k != "type"})

    def _stop(self, index: int, out: list[StreamEvent]) -> None:
        step = self._steps.get(index)
        if step is None or step.get("type") != "function_call":
            return
        number = self._call_number(index, out)
        pieces = self._args.pop(index, None)
        if pieces:
            text = "".join(pieces)
            try:
                step["arguments"] = read_arguments(text)
            except json.JSONDecodeError:
                step["arguments"] = text
        call = decode_call(step, self._names, str(self._meta.get("id") or ""), number)
        out.append(ToolCallFinished(index=number, call=call))

    def _join(self) -> None:
        """Put the joined fragments into the steps they belong to."""
        for (index, ci), pieces in self._text.items():
            content = self._steps[index].get("content")
            if isinstance(content, list) and ci < len(content):
                content[ci]["text"] = "".join(pieces)
        for index, pieces in self._summary.items():
            step = self._steps[index]
            step["summary"] = [{"type": "text", "text": "".join(pieces)}]
        for index, pieces in self._args.items():
            text = "".join(pieces)
            try:
                self._steps[index]["arguments"] = read_arguments(text)
            except json.JSONDecodeError:
                self._steps[index]["arguments"] = text
        self._text.clear()
        self._summary.clear()
        self._args.clear()
