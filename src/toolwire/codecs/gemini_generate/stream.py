"""gemini-generate streams: ``streamGenerateContent?alt=sse`` bodies, both ways.

Owns: `encode_stream` (a `Reply` as the SSE chunks Gemini sends) and `StreamDecoder` (chunks
-> stream events and, at the end, the whole `Reply`). A stream is read by adding its chunks up
to one reply body that `decode_response` reads, so whole and streamed replies agree. Must not
import ``request``, transport, client or any vendor SDK.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolwire.codecs.assembly import path_steps, put_at, text_pieces, value_at
from toolwire.codecs.framing import SSEFramer
from toolwire.codecs.gemini_generate.parts import WIRE, decode_call
from toolwire.codecs.gemini_generate.reply import (
    READ_KEYS,
    decode_error,
    decode_response,
    encode_response,
)
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
from toolwire.transcript import JSON, Reply, Request


def _sse(chunk: Mapping[str, Any]) -> bytes:
    return b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\r\n\r\n"


def encode_stream(reply: Reply, *, request: Request | None = None) -> list[bytes]:
    """The reply as ``streamGenerateContent?alt=sse`` sends it: text in pieces, calls whole,
    the finish reason and the full usage on the last chunk, no terminator."""
    body = encode_response(reply, request=request)
    candidates = body.get("candidates")
    if not candidates:
        return [_sse(body)]
    cand = candidates[0]
    head: dict[str, Any] = {k: body[k] for k in ("modelVersion", "responseId") if k in body}
    usage = body["usageMetadata"]
    early = {"promptTokenCount": usage["promptTokenCount"],
             "totalTokenCount": usage["promptTokenCount"]}
    groups: list[list[dict[str, Any]]] = []
    calls_open = False
    text_open = False  # the last chunk ends with a text part the next piece would continue
    for part in cand.get("content", {}).get("parts", []):
        if "functionCall" in part:
            if calls_open:
                groups[-1].append(part)
            else:
                groups.append([part])
            calls_open, text_open = True, False
            continue
        calls_open = False
        text = part.get("text")
        if isinstance(text, str) and text:
            pieces = text_pieces(text, keep_empty=True)
            marker = {"thought": True} if part.get("thought") is True else {}
            runs = [[{"text": piece, **marker}] for piece in pieces[:-1]]
            runs.append([{**part, "text": pieces[-1]}])
            if text_open:
                # a chunk's first part continues the part before it: a new part that follows
                # text starts beside that text in one chunk, so the reader keeps them apart
                groups[-1].extend(runs.pop(0))
            groups.extend(runs)
            text_open = True
        else:
            groups.append([part])
            text_open = False
    index = {"index": cand["index"]} if "index" in cand else {}
    chunks: list[dict[str, Any]] = [
        {"candidates": [{"content": {"role": "model", "parts": g}, **index}],
         "usageMetadata": early, **head}
        for g in groups
    ] or [{"candidates": [{}], **head}]
    last = chunks[-1]
    last["candidates"][0].update({k: v for k, v in cand.items() if k != "content"})
    last["usageMetadata"] = usage
    last.update({k: v for k, v in body.items() if k not in READ_KEYS})
    return [_sse(c) for c in chunks]


class StreamDecoder:
    """Assembles ``streamGenerateContent?alt=sse`` chunks into events and a final `Reply`.

    Text pieces are joined into one part (thought text apart from answer text); a
    ``thoughtSignature`` that arrives on a later piece joins the part it continues; calls
    arrive whole; the last ``usageMetadata`` wins. There is no terminator: a stream with no
    ``finishReason`` (and no blocked prompt) ended early.
    """

    def __init__(self, *, request: Request | None = None) -> None:
        self._request = request
        self._names = request_names(request)
        self._framer = SSEFramer()
        self._parts: list[dict[str, Any]] = []
        self._open: int | None = None
        # the open text part's fragments, joined when it closes: adding each to a growing
        # string would copy the text every time
        self._pieces: list[str] = []
        self._calls = 0
        self._partial: _PartialCall | None = None
        """A call whose arguments are still arriving (Vertex AI's ``partialArgs``)."""
        self._finish: JSON = None
        self._candidate: dict[str, JSON] = {}
        self._response: dict[str, JSON] = {}
        self._head: dict[str, JSON] = {}
        self._usage: JSON = None
        self._seen = False
        self._had_candidates = False

    def feed(self, data: bytes) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for event in self._framer.feed(data):
            self._event(event.data, events)
        return events

    def finish(self) -> Reply:
        for event in self._framer.close():
            self._event(event.data, [])
        if not self._seen:
            raise StreamError("the stream ended before any reply arrived", wire=WIRE)
        feedback = self._response.get("promptFeedback")
        blocked = (not self._had_candidates and isinstance(feedback, Mapping)
                   and "blockReason" in feedback)
        if self._finish is None and not blocked:
            raise StreamError("the stream ended before the reply finished (no finishReason)",
                              wire=WIRE)
        if self._partial is not None:  # still continuing: its arguments were cut off
            self._close_partial(self._partial.cut_off(), [])
        return decode_response(self.body(), request=self._request)

    def body(self) -> dict[str, Any]:
        """The whole reply body the chunks so far add up to."""
        body: dict[str, Any] = {}
        self._join()
        if self._had_candidates:
            cand: dict[str, Any] = {}
            if self._parts:
                cand["content"] = {"role": "model", "parts": [dict(p) for p in self._parts]}
            if self._finish is not None:
                cand["finishReason"] = self._finish
            cand.update(self._candidate)
            body["candidates"] = [cand]
        if self._usage is not None:
            body["usageMetadata"] = self._usage
        body.update(self._head)
        body.update(self._response)
        return body

    def _event(self, data: str, events: list[StreamEvent]) -> None:
        chunk = event_json(data, WIRE, "a stream chunk")
        if chunk is None:
            return
        for item in chunk if isinstance(chunk, list) else [chunk]:
            self._chunk(item, events)

    def _chunk(self, chunk: JSON, events: list[StreamEvent]) -> None:
        if not isinstance(chunk, Mapping):
            raise StreamError("a stream chunk is not a JSON object", wire=WIRE, body=chunk)
        if "error" in chunk:
            error = decode_error(0, chunk)
            if type(error) is ProviderError:
                error = StreamError(error.message, status=error.status,
                                    error_type=error.error_type, wire=WIRE, body=chunk)
            raise error
        self._seen = True
        for key, value in chunk.items():
            if key == "usageMetadata":
                self._usage = value
            elif key in ("modelVersion", "responseId"):
                self._head[key] = value
            elif key != "candidates":
                self._response[key] = value
        candidates = chunk.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            return
        self._had_candidates = True
        cand = candidates[0]
        if not isinstance(cand, Mapping):
            return
        for key, value in cand.items():
            if key == "finishReason":
                self._finish = value
            elif key != "content":
                self._candidate[key] = value
        content = cand.get("content")
        parts = content.get("parts") if isinstance(content, Mapping) else None
        for number, part in enumerate(parts if isinstance(parts, list) else []):
            if isinstance(part, Mapping):
                self._part(part, events, continues=number == 0)

    def _part(self, part: Mapping[str, JSON], events: list[StreamEvent], *,
              continues: bool = True) -> None:
        """One part of a chunk. Only a chunk's first part may continue the part before it:
        parts listed side by side in one chunk are separate parts."""
        fc = part.get("functionCall")
        if self._partial is not None or (
                isinstance(fc, Mapping) and ("partialArgs" in fc or fc.get("willContinue"))):
            self._close()
            self._streamed_call(part, events)
            return
        if "functionCall" in part:
            self._close()
            index = self._calls
            self._calls += 1
            self._parts.append(dict(part))
            call = decode_call(part, names=self._names,
                               seed=str(self._head.get("responseId") or ""), index=index)
            events.append(ToolCallStarted(index=index, id=call.id, name=call.name))
            events.append(ToolCallDelta(index=index, fragment=call.arguments_text))
            events.append(ToolCallFinished(index=index, call=call))
            return
        if "functionResponse" in part or not ("text" in part or part.get("thought") is True):
            self._close()
            self._parts.append(dict(part))
            return
        text = part.get("text")
        text = text if isinstance(text, str) else ""
        thought = part.get("thought") is True
        if self._open is not None and continues:
            current = self._parts[self._open]
            same_kind = (current.get("thought") is True) == thought
            clash = "thoughtSignature" in current and "thoughtSignature" in part
            if same_kind and not clash:
                self._pieces.append(text)
                current.update((k, v) for k, v in part.items() if k != "text")
                self._delta(text, thought, events)
                return
        if not text and set(part) <= {"text", "thought"}:
            return
        self._close()
        self._parts.append(dict(part))
        self._open = len(self._parts) - 1
        self._pieces = [text]
        self._delta(text, thought, events)

    def _streamed_call(self, part: Mapping[str, JSON], events: list[StreamEvent]) -> None:
        """A fragment of a call whose arguments stream (``partialArgs``, ``willContinue``)."""
        fc = part.get("functionCall")
        if not isinstance(fc, Mapping):
            raise StreamError("a function call's arguments were still arriving when a part "
                              f"of another kind came: {str(part)[:200]}", wire=WIRE)
        if self._partial is None:
            self._partial = _PartialCall(self._calls)
            self._calls += 1
        partial = self._partial
        partial.add(part, fc)
        wire_id = partial.call_fields.get("id")
        if not partial.announced and partial.name and isinstance(wire_id, str) and wire_id:
            # with the server's own id the call can be announced now; a made-up id depends
            # on the arguments, so such a call is announced when it is whole
            partial.announced = True
            events.append(ToolCallStarted(index=partial.index, id=wire_id,
                                          name=self._names.user(partial.name)))
        if not fc.get("willContinue"):
            self._close_partial(partial.whole(), events)

    def _close_partial(self, whole: dict[str, Any], events: list[StreamEvent]) -> None:
        assert self._partial is not None
        index, announced = self._partial.index, self._partial.announced
        self._partial = None
        self._parts.append(whole)
        call = decode_call(whole, names=self._names,
                           seed=str(self._head.get("responseId") or ""), index=index)
        if not announced:
            events.append(ToolCallStarted(index=index, id=call.id, name=call.name))
        events.append(ToolCallDelta(index=index, fragment=call.arguments_text))
        events.append(ToolCallFinished(index=index, call=call))

    def _join(self) -> None:
        """Put the open text part's fragments, joined, into it."""
        if self._open is not None and len(self._pieces) > 1:
            self._pieces = ["".join(self._pieces)]
            self._parts[self._open]["text"] = self._pieces[0]

    def _close(self) -> None:
        self._join()
        self._open, self._pieces = None, []

    @staticmethod
    def _delta(text: str, thought: bool, events: list[StreamEvent]) -> None:
        if text:
            events.append(ReasoningDelta(text=text) if thought else TextDelta(text=text))


# --------------------------------------------------------------------------- streamed arguments


class _PartialCall:
    """One function call assembled from fragments, as Vertex AI streams it.

    The first fragment names the function; each carries ``partialArgs``: values at JSON paths
    (``$.city``, ``$.stops[1].name``), a string continuing in the next fragment when the value
    says ``willContinue``. The call is whole when a fragment no longer says ``willContinue``.
    """

    def __init__(self, index: int) -> None:
        self.index = index
        self.name = ""
        self.args: dict[str, Any] = {}
        self.extras: dict[str, Any] = {}
        self.call_fields: dict[str, Any] = {}
        self._continuing: str | None = None  # the path whose string goes on
        self._strings: dict[str, tuple[list[str | int], list[str]]] = {}
        """Strings still being continued, by path: their pieces, joined once at the end."""
        self.announced = False

    def add(self, part: Mapping[str, Any], fc: Mapping[str, Any]) -> None:
        """Take one fragment."""
        for key, value in part.items():
            if key != "functionCall":
                self.extras[key] = value
        for key, value in fc.items():
            if key == "name" and isinstance(value, str) and value:
                self.name = value
            elif key == "args" and isinstance(value, Mapping):
                self.args.update(value)
            elif key not in ("name", "args", "partialArgs", "willContinue"):
                self.call_fields[key] = value
        pieces = fc.get("partialArgs")
        if pieces is not None and not isinstance(pieces, list):
            raise StreamError("functionCall.partialArgs is not a list", wire=WIRE, body=part)
        for piece in pieces or []:
            self._take(piece)

    def _take(self, piece: Any) -> None:
        if not isinstance(piece, Mapping) or not isinstance(piece.get("jsonPath"), str):
            raise StreamError(f"a partial argument without a jsonPath: {str(piece)[:200]}",
                              wire=WIRE)
        path = piece["jsonPath"]
        steps = path_steps(path, WIRE)
        continued, self._continuing = self._continuing == path, (
            path if piece.get("willContinue") else None)
        if "stringValue" in piece:
            value: Any = str(piece["stringValue"])
            if continued and path in self._strings:
                self._strings[path][1].append(value)
                return
            self._strings[path] = (steps, [value])
        elif "numberValue" in piece:
            value = piece["numberValue"]
        elif "boolValue" in piece:
            value = piece["boolValue"] is True
        else:
            value = None  # nullValue, or a value-less piece that opens the path
            if value_at(self.args, steps) is not None and "nullValue" not in piece:
                return
        if not isinstance(value, str):
            self._strings.pop(path, None)
        put_at(self.args, steps, value, path, WIRE)

    def _joined(self) -> dict[str, Any]:
        """The arguments with every continued string joined (once, not piece by piece)."""
        for path, (steps, pieces) in self._strings.items():
            if len(pieces) > 1:
                put_at(self.args, steps, "".join(pieces), path, WIRE)
                del pieces[1:]
                pieces[0] = value_at(self.args, steps)
        return self.args

    def whole(self) -> dict[str, Any]:
        """The call as one ``functionCall`` part, as a whole reply carries it."""
        return {"functionCall": {**self.call_fields, "name": self.name, "args": self._joined()},
                **self.extras}

    def cut_off(self) -> dict[str, Any]:
        """The call with arguments as the broken text they were when the stream ended."""
        text = json.dumps(self._joined(), ensure_ascii=False)
        return {"functionCall": {**self.call_fields, "name": self.name, "args": text[:-1]},
                **self.extras}
