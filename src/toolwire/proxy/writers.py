"""The live writers of the built-in wires (`toolwire.proxy.live.Writer`): `AnthropicWriter`,
`ChatWriter`, `ResponsesWriter`, `OllamaWriter`, `GeminiWriter`, `BedrockWriter`; the
Interactions wire's is `toolwire.proxy.steps`'. Each wire's record names its writer
(``live_writer``), which `toolwire.proxy.live.writer_for` imports on first use; the writer
learns the wire it writes from there.

Must not import: the server.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from toolwire.codecs import get_codec
from toolwire.codecs.anthropic_messages.stream import encode_tail
from toolwire.codecs.eventstream import encode_message
from toolwire.proxy.answers import Answer
from toolwire.proxy.live import Writer
from toolwire.proxy.live import dumps as _dumps
from toolwire.transcript import Message, Reply, Request, ToolCallPart

_string = json.encoder.encode_basestring
"""A string as JSON, as `_dumps` writes one (without its look at the value's type)."""


class AnthropicWriter(Writer):
    """Anthropic Messages: a block per text run and per call, between ``message_start`` and
    the whole reply's ``message_delta`` and ``message_stop``."""

    TAIL = 2
    ID_PREFIX = "msg_"

    def __init__(self, wire: str, request: Request) -> None:
        super().__init__(wire, request)
        self.index = -1
        self.open: str | None = None

    @staticmethod
    def _sse(payload: dict[str, Any]) -> bytes:
        return f"event: {payload['type']}\ndata: {_dumps(payload)}\n\n".encode()

    # The events every stream writes, as text with their few values put in: the same bytes
    # `_sse` writes for the same dict (tests/test_proxy_live.py), at a fraction of the cost.
    HEAD = ('event: message_start\ndata: {"type":"message_start","message":{"id":%s,'
            '"type":"message","role":"assistant","model":%s,"content":[],'
            '"stop_reason":null,"stop_sequence":null,'
            '"usage":{"input_tokens":0,"output_tokens":0}}}\n\n')
    TEXT_START = ('event: content_block_start\ndata: {"type":"content_block_start",'
                  '"index":%d,"content_block":{"type":"text","text":""}}\n\n')
    TEXT_DELTA = ('event: content_block_delta\ndata: {"type":"content_block_delta",'
                  '"index":%d,"delta":{"type":"text_delta","text":%s}}\n\n')

    def tail(self, reply: Reply) -> list[bytes]:
        # only the tail written: the whole stream's events are JSON the client has had
        return encode_tail(reply, self.TAIL, request=self.request)

    def head(self) -> list[bytes]:
        return [(self.HEAD % (_string(self.reply_id), _dumps(self.request.model))).encode()]

    def _start(self, kind: str, block: dict[str, Any]) -> list[bytes]:
        out = self.close()
        self.index += 1
        self.open = kind
        return [*out, self._sse({"type": "content_block_start", "index": self.index,
                                 "content_block": block})]

    def _delta(self, delta: dict[str, Any]) -> bytes:
        return self._sse({"type": "content_block_delta", "index": self.index, "delta": delta})

    def text(self, text: str) -> list[bytes]:
        out: list[bytes] = []
        if self.open != "text":  # as _start writes it
            out = self.close()
            self.index += 1
            self.open = "text"
            out.append((self.TEXT_START % self.index).encode())
        out.append((self.TEXT_DELTA % (self.index, _string(text))).encode())
        return out

    def reasoning(self, text: str) -> list[bytes]:
        out = ([] if self.open == "thinking" else
               self._start("thinking", {"type": "thinking", "thinking": "", "signature": ""}))
        return [*out, self._delta({"type": "thinking_delta", "thinking": text})]

    def call(self, position: int, call_id: str, name: str) -> list[bytes]:
        return self._start(f"call{position}", {"type": "tool_use", "id": call_id, "name": name,
                                               "input": {}})

    def arguments(self, position: int, fragment: str) -> list[bytes]:
        if self.open != f"call{position}":  # calls stream one after another in this wire
            return []
        return [self._delta({"type": "input_json_delta", "partial_json": fragment})]

    def close(self) -> list[bytes]:
        if self.open is None:
            return []
        self.open = None
        return [self._sse({"type": "content_block_stop", "index": self.index})]

    def failed(self, error: Answer) -> list[bytes]:
        return [f"event: error\ndata: {error[2].decode()}\n\n".encode()]

    def block(self, block: dict[str, Any], *, readable: bool) -> list[bytes]:
        out = self._start("sealed", {"type": "thinking", "thinking": "", "signature": ""})
        if readable and block.get("thinking"):
            out.append(self._delta({"type": "thinking_delta", "thinking": block["thinking"]}))
        out.append(self._delta({"type": "signature_delta",
                                "signature": block.get("signature", "")}))
        return [*out, *self.close()]


class ChatWriter(Writer):
    """Chat Completions: a chunk per piece of text and per call and fragment, then the whole
    reply's finishing chunk, its usage chunk and ``[DONE]``."""

    TAIL = 3
    ID_PREFIX = "chatcmpl-"

    def _chunk(self, delta: dict[str, Any]) -> bytes:
        chunk = {"id": self.reply_id, "object": "chat.completion.chunk", "created": 0,
                 "model": self.request.model,
                 "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        return f"data: {_dumps(chunk)}\n\n".encode()

    def head(self) -> list[bytes]:
        return [self._chunk({"role": "assistant", "content": ""})]

    def text(self, text: str) -> list[bytes]:
        return [self._chunk({"content": text})]

    def reasoning(self, text: str) -> list[bytes]:
        return [self._chunk({"reasoning_content": text})]

    def call(self, position: int, call_id: str, name: str) -> list[bytes]:
        return [self._chunk({"tool_calls": [{"index": position, "id": call_id,
                                             "type": "function",
                                             "function": {"name": name, "arguments": ""}}]})]

    def arguments(self, position: int, fragment: str) -> list[bytes]:
        return [self._chunk({"tool_calls": [{"index": position,
                                             "function": {"arguments": fragment}}]})]


class ResponsesWriter(Writer):
    """The Responses API: ``response.created``, then an output item per text run and per call
    with their deltas, each item done when the next begins, then the whole reply's
    ``response.completed`` holding the items as they were streamed."""

    TAIL = 1
    ID_PREFIX = "resp_"

    def __init__(self, wire: str, request: Request) -> None:
        super().__init__(wire, request)
        self.seq = itertools.count()
        self.items: list[dict[str, Any]] = []
        self.open: dict[str, Any] | None = None

    def _event(self, kind: str, **fields: Any) -> bytes:
        payload = {"type": kind, "sequence_number": next(self.seq), **fields}
        return f"event: {kind}\ndata: {_dumps(payload)}\n\n".encode()

    def _response(self, reply: Reply) -> dict[str, Any]:
        return get_codec(self.wire).encode_response(reply, request=self.request)

    def head(self) -> list[bytes]:
        shell = dict(self._response(Reply(message=Message(role="assistant"), id=self.reply_id,
                                          model=self.request.model)),
                     status="in_progress", usage=None)
        return [self._event("response.created", response=shell),
                self._event("response.in_progress", response=shell)]

    def _start(self, item: dict[str, Any]) -> list[bytes]:
        out = self.close()
        self.open = item
        self.items.append(item)
        shown = {k: v for k, v in item.items() if k not in _KEPT_ASIDE}
        return [*out, self._event("response.output_item.added",
                                  output_index=len(self.items) - 1,
                                  item={**shown, "status": "in_progress"})]

    def _where(self) -> dict[str, Any]:
        """Where the newest item is: its id and position."""
        return {"item_id": self.items[-1]["id"], "output_index": len(self.items) - 1}

    def _running(self, kind: str, prefix: str, fields: dict[str, Any], part_event: str,
                 part: dict[str, Any], where: dict[str, int], text: str) -> list[bytes]:
        """Open an item of ``kind`` with its first part, unless one is open; add ``text``."""
        out: list[bytes] = []
        item = self.open
        if item is None or item["type"] != kind:
            item = {"type": kind, "id": f"{prefix}_{self.reply_id[5:]}{len(self.items)}",
                    **fields, "text": ""}
            out = self._start(item)
            out.append(self._event(part_event, **self._where(), **where, part=part))
        item["text"] += text
        return out

    def text(self, text: str) -> list[bytes]:
        out = self._running("message", "msg", {"status": "completed", "role": "assistant",
                                               "content": []},
                            "response.content_part.added",
                            {"type": "output_text", "text": "", "annotations": []},
                            {"content_index": 0}, text)
        return [*out, self._event("response.output_text.delta", **self._where(),
                                  content_index=0, delta=text, logprobs=[])]

    def reasoning(self, text: str) -> list[bytes]:
        out = self._running("reasoning", "rs", {"summary": []},
                            "response.reasoning_summary_part.added",
                            {"type": "summary_text", "text": ""}, {"summary_index": 0}, text)
        return [*out, self._event("response.reasoning_summary_text.delta", **self._where(),
                                  summary_index=0, delta=text)]

    def call(self, position: int, call_id: str, name: str) -> list[bytes]:
        return self._start({"type": "function_call", "id": f"fc_{self.reply_id[5:]}{position}",
                            "call_id": call_id, "name": name, "arguments": "",
                            "status": "completed", "position": position})

    def arguments(self, position: int, fragment: str) -> list[bytes]:
        if self.open is None or self.open.get("position") != position:
            return []
        self.open["arguments"] += fragment
        return [self._event("response.function_call_arguments.delta", **self._where(),
                            delta=fragment)]

    def close(self) -> list[bytes]:
        item, self.open = self.open, None
        if item is None:
            return []
        where = self._where()  # the open item is always the newest
        out: list[bytes] = []
        if item["type"] == "message":
            text = item.pop("text")
            part = {"type": "output_text", "text": text, "annotations": []}
            item["content"] = [part]
            out += [self._event("response.output_text.done", **where, content_index=0,
                                text=text, logprobs=[]),
                    self._event("response.content_part.done", **where, content_index=0,
                                part=part)]
        elif item["type"] == "reasoning":
            text = item.pop("text")
            summary = {"type": "summary_text", "text": text}
            item["summary"] = [summary]
            out += [self._event("response.reasoning_summary_text.done", **where,
                                summary_index=0, text=text),
                    self._event("response.reasoning_summary_part.done", **where,
                                summary_index=0, part=summary)]
        else:
            item.pop("position")
            out.append(self._event("response.function_call_arguments.done", **where,
                                   name=item["name"], arguments=item["arguments"]))
        out.append(self._event("response.output_item.done", output_index=where["output_index"],
                               item=item))
        return out

    def block(self, block: dict[str, Any], *, readable: bool) -> list[bytes]:
        out = self.close()
        block = block if readable else {**block, "summary": []}
        self.items.append(block)
        index = len(self.items) - 1
        return [*out, self._event("response.output_item.added", output_index=index,
                                  item={**block, "summary": []}),
                self._event("response.output_item.done", output_index=index, item=block)]

    def finish(self, reply: Reply) -> list[bytes]:
        out = [*self.close(), *self.sealed_blocks(reply)]
        final = self._response(reply)
        final["output"] = self.items  # what the client was streamed, ids and all
        kind = {"incomplete": "response.incomplete"}.get(final["status"], "response.completed")
        return [*out, self._event(kind, response=final)]

    def failed(self, error: Answer) -> list[bytes]:
        found = json.loads(error[2]).get("error")
        said = found if isinstance(found, dict) else {}
        return [self._event("error", code=said.get("code") or said.get("type"),
                            message=said.get("message", ""), param=None)]


_KEPT_ASIDE = ("text", "position")
"""What a Responses writer keeps on an open item for itself, never sent as a field."""


class OllamaWriter(Writer):
    """Ollama: a JSON line per piece of text, each call whole on a line of its own once its
    arguments are complete, then the whole reply's last line (``done``, its counts)."""

    TAIL = 1
    ID_PREFIX = "ollama-"

    def _line(self, message: dict[str, Any]) -> bytes:
        line = {"model": self.request.model, "created_at": "1970-01-01T00:00:00Z",
                "message": {"role": "assistant", **message}, "done": False}
        return (_dumps(line) + "\n").encode()

    def head(self) -> list[bytes]:
        return []

    def text(self, text: str) -> list[bytes]:
        return [self._line({"content": text})]

    def reasoning(self, text: str) -> list[bytes]:
        return [self._line({"content": "", "thinking": text})]

    def call(self, position: int, call_id: str, name: str) -> list[bytes]:
        return []

    def arguments(self, position: int, fragment: str) -> list[bytes]:
        return []

    def finished(self, position: int, call: ToolCallPart) -> list[bytes]:
        reply = Reply(message=Message(role="assistant", parts=(call,)), stop="tool_calls")
        body = get_codec(self.wire).encode_response(reply, request=self.request)
        return [self._line({"content": "", "tool_calls": body["message"]["tool_calls"]})]


class GeminiWriter(Writer):
    """Gemini: a chunk per piece of text, each call whole in a chunk of its own once its
    arguments are complete, then a last chunk with the whole reply's finish reason and usage
    (and the sealed reasoning, as thought parts)."""


    def _chunk(self, parts: list[Any], **more: Any) -> bytes:
        chunk = {"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0,
                                 **more.pop("candidate", {})}], **more}
        return f"data: {_dumps(chunk)}\n\n".encode()

    def _body(self, reply: Reply) -> dict[str, Any]:
        return get_codec(self.wire).encode_response(reply, request=self.request)

    def head(self) -> list[bytes]:
        return []

    def text(self, text: str) -> list[bytes]:
        return [self._chunk([{"text": text}])]

    def reasoning(self, text: str) -> list[bytes]:
        return [self._chunk([{"text": text, "thought": True}])]

    def call(self, position: int, call_id: str, name: str) -> list[bytes]:
        return []

    def arguments(self, position: int, fragment: str) -> list[bytes]:
        return []

    def finished(self, position: int, call: ToolCallPart) -> list[bytes]:
        reply = Reply(message=Message(role="assistant", parts=(call,)), stop="tool_calls")
        return [self._chunk(self._body(reply)["candidates"][0]["content"]["parts"])]

    def finish(self, reply: Reply) -> list[bytes]:
        body = self._body(reply)
        candidate = {k: v for k, v in body["candidates"][0].items()
                     if k not in ("content", "index")}
        rest = {k: v for k, v in body.items() if k != "candidates"}
        parts = [b if not self.reasoned else {**b, "text": ""} for b in self.sealed(reply)]
        return [self._chunk(parts, candidate=candidate, **rest)]


class BedrockWriter(Writer):
    """Bedrock's ConverseStream: AWS event-stream messages, a block per text run and per call
    between ``messageStart`` and the whole reply's ``messageStop`` and ``metadata``."""

    TAIL = 2

    def __init__(self, wire: str, request: Request) -> None:
        super().__init__(wire, request)
        self.index = -1
        self.open: str | None = None

    @staticmethod
    def _event(name: str, payload: dict[str, Any]) -> bytes:
        return encode_message({":event-type": name, ":content-type": "application/json",
                               ":message-type": "event"}, _dumps(payload).encode())

    def _delta(self, delta: dict[str, Any]) -> bytes:
        return self._event("contentBlockDelta", {"contentBlockIndex": self.index,
                                                 "delta": delta})

    def _next(self, kind: str) -> list[bytes]:
        out = self.close()
        self.index += 1
        self.open = kind
        return out

    def head(self) -> list[bytes]:
        return [self._event("messageStart", {"role": "assistant"})]

    def text(self, text: str) -> list[bytes]:
        out = [] if self.open == "text" else self._next("text")
        return [*out, self._delta({"text": text})]

    def reasoning(self, text: str) -> list[bytes]:
        out = [] if self.open == "thinking" else self._next("thinking")
        return [*out, self._delta({"reasoningContent": {"text": text}})]

    def call(self, position: int, call_id: str, name: str) -> list[bytes]:
        out = self._next(f"call{position}")
        return [*out, self._event("contentBlockStart", {
            "contentBlockIndex": self.index,
            "start": {"toolUse": {"toolUseId": call_id, "name": name}}})]

    def arguments(self, position: int, fragment: str) -> list[bytes]:
        if self.open != f"call{position}":
            return []
        return [self._delta({"toolUse": {"input": fragment}})]

    def block(self, block: dict[str, Any], *, readable: bool) -> list[bytes]:
        said = block.get("reasoningText")
        if not isinstance(said, dict):
            return []
        out = self._next("sealed")
        if readable and said.get("text"):
            out.append(self._delta({"reasoningContent": {"text": said["text"]}}))
        out.append(self._delta({"reasoningContent": {"signature": said.get("signature", "")}}))
        return [*out, *self.close()]

    def close(self) -> list[bytes]:
        if self.open is None:
            return []
        self.open = None
        return [self._event("contentBlockStop", {"contentBlockIndex": self.index})]


__all__ = ["AnthropicWriter", "BedrockWriter", "ChatWriter", "GeminiWriter", "OllamaWriter",
           "ResponsesWriter"]
