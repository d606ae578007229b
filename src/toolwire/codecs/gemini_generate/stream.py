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

from toolwire import _json
from toolwire.codecs.framing import SSEFramer
from toolwire.codecs.gemini_generate.parts import WIRE, decode_call, request_names
from toolwire.codecs.gemini_generate.reply import (
    READ_KEYS,
    decode_error,
    decode_response,
    encode_response,
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
from toolwire.transcript import JSON, Reply, Request


def _sse(chunk: Mapping[str, Any]) -> bytes:
    return b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\r\n\r\n"


def _pieces(text: str) -> list[str]:
    step = max(1, -(-len(text) // 3))
    return [text[i : i + step] for i in range(0, len(text), step)] or [text]


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
    for part in cand.get("content", {}).get("parts", []):
        if "functionCall" in part:
            if calls_open:
                groups[-1].append(part)
            else:
                groups.append([part])
            calls_open = True
            continue
        calls_open = False
        text = part.get("text")
        if isinstance(text, str) and text:
            pieces = _pieces(text)
            marker = {"thought": True} if part.get("thought") is True else {}
            groups.extend([{"text": piece, **marker}] for piece in pieces[:-1])
            groups.append([{**part, "text": pieces[-1]}])
        else:
            groups.append([part])
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
        self._calls = 0
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
        return decode_response(self.body(), request=self._request)

    def body(self) -> dict[str, Any]:
        """The whole reply body the chunks so far add up to."""
        body: dict[str, Any] = {}
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
        text = data.strip()
        if not text or text == "[DONE]":
            return
        try:
            chunk = _json.loads(text)
        except json.JSONDecodeError as exc:
            raise StreamError(f"a stream chunk is not JSON: {exc.msg}", wire=WIRE,
                              body=text) from None
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
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, Mapping):
                self._part(part, events)

    def _part(self, part: Mapping[str, JSON], events: list[StreamEvent]) -> None:
        if "functionCall" in part:
            self._open = None
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
            self._open = None
            self._parts.append(dict(part))
            return
        text = part.get("text")
        text = text if isinstance(text, str) else ""
        thought = part.get("thought") is True
        if self._open is not None:
            current = self._parts[self._open]
            same_kind = (current.get("thought") is True) == thought
            clash = "thoughtSignature" in current and "thoughtSignature" in part
            if same_kind and not clash:
                current["text"] = str(current.get("text", "")) + text
                current.update((k, v) for k, v in part.items() if k != "text")
                self._delta(text, thought, events)
                return
        if not text and set(part) <= {"text", "thought"}:
            return
        self._parts.append(dict(part))
        self._open = len(self._parts) - 1
        self._delta(text, thought, events)

    @staticmethod
    def _delta(text: str, thought: bool, events: list[StreamEvent]) -> None:
        if text:
            events.append(ReasoningDelta(text=text) if thought else TextDelta(text=text))
