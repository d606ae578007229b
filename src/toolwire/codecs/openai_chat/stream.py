"""OpenAI Chat Completions: streamed replies, both ways.

Owns `StreamDecoder` (SSE ``data:`` chunks in, stream events out, and at the end the same
`Reply` that `decode_body` gives for the assembled body) and `encode_stream` (a reply as
realistic chunks). Pure; imports only the transcript, errors, events, `toolwire.codecs.base`,
`toolwire.codecs.framing`, `toolwire.codecs.assembly` and the chat `parts`, `reasoning` and
`reply`; must not import the wire's request module. A long text or argument string in many
small deltas costs time linear in its length (fragments are joined once, a call's place is kept
with it).

The decoder assumes every quirk compatible servers show: keep-alive comments, a missing or
repeated ``index`` (a different non-empty id on a taken index opens a new call), ``name: ""`` or
placeholder ids on continuation fragments, whole calls in one chunk, arguments sent as an object,
``reasoning`` / ``reasoning_content`` / ``reasoning_details`` (details merged by their ``index``),
a usage chunk with ``choices: []``, and an ``error`` chunk in the middle of the stream.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolwire import _json
from toolwire.codecs.assembly import Joins, WholeObject, text_pieces
from toolwire.codecs.base import NameMap, call_id_for, dumps
from toolwire.codecs.framing import SSEFramer
from toolwire.codecs.openai_chat.parts import (
    WIRE,
    decode_call,
    mapping,
    name_map,
    plain,
    real_id,
    reply_seed,
)
from toolwire.codecs.openai_chat.reasoning import (
    detail_fragments,
    join_thinking,
    merge_detail,
    thinking_chunks,
    thinking_text,
)
from toolwire.codecs.openai_chat.reply import (
    decode_body,
    encode_usage,
    error_from_chunk,
    finish_reason_of,
    reply_extras,
    reply_id,
    reply_message,
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
from toolwire.transcript import Reply, Request, ToolCallPart

_CHUNK_KEYS = frozenset({"id", "object", "created", "model", "choices", "usage", "error",
                         "obfuscation"})
_HEAD_KEYS = ("id", "model", "created")
_TEXT_DELTA_KEYS = frozenset({"role", "content"})
"""What a delta of text alone holds: read whole once its content is."""


class _Slot:
    """One tool call being assembled."""

    __slots__ = ("args", "args_obj", "custom_input", "custom_name", "done", "extras", "id",
                 "key", "name", "number", "scan", "started", "type")

    def __init__(self, key: int, number: int) -> None:
        self.key = key
        self.number = number  # its place among the reply's calls
        self.scan = WholeObject()  # whether its argument text is a whole object yet
        self.id: str | None = None
        self.name: str | None = None
        self.type: str | None = None
        self.args: list[str] = []
        self.args_obj: Any = None
        self.custom_name: str | None = None
        self.custom_input: list[str] = []
        self.extras: dict[str, Any] = {}
        self.started = False
        self.done = False  # its ToolCallFinished has been sent

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.id is not None:
            out["id"] = self.id
        if self.type == "custom":
            out["type"] = "custom"
            out["custom"] = {"name": self.custom_name or "", "input": "".join(self.custom_input)}
        else:
            out["type"] = self.type or "function"
            args: Any = self.args_obj if self.args_obj is not None else "".join(self.args)
            out["function"] = {"name": self.name or "", "arguments": args}
        out.update(self.extras)
        return out


class StreamDecoder:
    """Incremental decoder for a streamed Chat Completions reply."""

    def __init__(self, *, request: Request | None = None) -> None:
        self._request = request
        self._names: NameMap | None = name_map(request.tools) if request is not None else None
        self._framer = SSEFramer()
        self._head: dict[str, Any] = {}
        self._extras: dict[str, Any] = {}
        self._text: list[str] | None = None
        self._refusal: list[str] = []
        self._items: list[dict[str, Any]] = []
        """Content that came as a list of typed chunks (Mistral's text and thinking), merged."""
        self._reasoning: dict[str, list[str]] = {}
        self._details: dict[tuple[int, int], dict[str, Any]] = {}
        """reasoning_details entries by (index, n): the n-th entry of another type that came
        under the same index (OpenRouter sends a summary and its encrypted form both at 0)."""
        self._latest: dict[int, int] = {}  # index -> the n of its newest entry
        self._joins = Joins()  # text of content items and reasoning details, joined once
        self._slots: list[_Slot] = []
        self._by_key: dict[int, _Slot] = {}
        self._finish: str | None = None
        self._native: Any = None
        self._usage: Any = None
        self._done = False
        self._finished_calls = False
        self._seen = False
        self._error: ProviderError | None = None

    # ------------------------------------------------------------------ feeding

    def feed(self, data: bytes) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for event in self._framer.feed(data):
            self._event(event.data, out)
        return out

    def _event(self, data: str, out: list[StreamEvent]) -> None:
        if self._error is not None:
            return
        said = data.strip()
        if not said:
            return
        if said == "[DONE]":
            self._done = True
            self._finish_calls(out)
            return
        try:
            chunk = _json.loads(data)
        except json.JSONDecodeError:
            self._error = StreamError(f"the stream sent a chunk that is not JSON: {data[:200]!r}",
                                      wire=WIRE, body=data)
            return
        if type(chunk) is not dict and not isinstance(chunk, Mapping):  # a dict tested first
            return
        self._seen = True
        if chunk.get("error") is not None:
            self._error = error_from_chunk(chunk)
            return
        head = self._head
        if len(head) < len(_HEAD_KEYS):  # the keys kept from the first chunk that has each
            for key in _HEAD_KEYS:
                if key not in head and chunk.get(key) not in (None, ""):
                    head[key] = chunk[key]
        if not _CHUNK_KEYS.issuperset(chunk):  # a key of the server's own
            for key, value in chunk.items():
                if key not in _CHUNK_KEYS and value is not None:
                    self._extras[key] = plain(value)
        usage = chunk.get("usage")
        if usage is not None and (type(usage) is dict or isinstance(usage, Mapping)):
            self._usage = plain(usage)
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            if ((type(choice) is dict or isinstance(choice, Mapping))
                    and choice.get("index", 0) == 0):
                self._choice(choice, out)

    def _choice(self, choice: Mapping[str, Any], out: list[StreamEvent]) -> None:
        delta = choice.get("delta")
        if type(delta) is dict or isinstance(delta, Mapping):
            self._delta(delta, out)
        if choice.get("native_finish_reason") is not None:
            self._native = plain(choice["native_finish_reason"])
        reason = choice.get("finish_reason")
        if isinstance(reason, str):
            self._finish = reason
            self._finish_calls(out)

    def _delta(self, delta: Mapping[str, Any], out: list[StreamEvent]) -> None:
        content = delta.get("content")
        if isinstance(content, str):
            if self._items and content:
                self._add_item({"type": "text", "text": content}, out)
            else:
                if self._text is None:
                    self._text = []
                self._text.append(content)
                if content:
                    out.append(TextDelta(text=content))
        elif isinstance(content, list):
            for item in content:
                if isinstance(item, Mapping):
                    self._add_item(item, out)
        if _TEXT_DELTA_KEYS.issuperset(delta):  # the usual delta: nothing more in it
            return
        refusal = delta.get("refusal")
        if isinstance(refusal, str):
            self._refusal.append(refusal)
            if refusal:  # a refusal is text in the reply, so it streams as text too
                out.append(TextDelta(text=refusal))
        for key in ("reasoning", "reasoning_content"):
            piece = delta.get(key)
            if isinstance(piece, str):
                self._reasoning.setdefault(key, []).append(piece)
                if piece and next(iter(self._reasoning)) == key:  # one source of deltas only
                    out.append(ReasoningDelta(text=piece))
        details = delta.get("reasoning_details")
        if isinstance(details, list):
            for item in details:
                if isinstance(item, Mapping):
                    text = merge_detail(self._details, self._latest, self._joins, item)
                    if text and not self._reasoning:
                        out.append(ReasoningDelta(text=text))
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for position, call in enumerate(calls):
                if isinstance(call, Mapping):
                    self._call(position, call, out)

    def _add_item(self, item: Mapping[str, Any], out: list[StreamEvent]) -> None:
        """One chunk of list content: text and thinking pieces join the item they continue."""
        kind = item.get("type")
        if not self._items and self._text is not None:  # plain text came first: it leads
            if any(self._text):
                self._items.append({"type": "text", "text": "".join(self._text)})
            self._text = None
        last = self._items[-1] if self._items else None
        if kind == "text" and isinstance(item.get("text"), str):
            piece = item["text"]
            if last is not None and last.get("type") == "text" and item.keys() <= {"type", "text"}:
                self._joins.add(last, "text", piece)
            else:
                self._items.append(plain(item))
            if piece:
                out.append(TextDelta(text=piece))
        elif kind == "thinking":
            piece = thinking_text(item.get("thinking"))
            if last is not None and last.get("type") == "thinking":
                join_thinking(last, item, self._joins)
            else:
                self._items.append(plain(item))
            if piece:
                out.append(ReasoningDelta(text=piece))
        else:
            self._items.append(plain(item))

    def _call(self, position: int, call: Mapping[str, Any], out: list[StreamEvent]) -> None:
        index = call.get("index")
        key = index if isinstance(index, int) and not isinstance(index, bool) else position
        call_id = real_id(call.get("id"))
        slot = self._by_key.get(key)
        if slot is None or _starts_another_call(slot, call_id, call):
            if self._slots:
                self._finish_early(len(self._slots) - 1, out)
            slot = _Slot(key, len(self._slots))
            self._slots.append(slot)
            self._by_key[key] = slot
        if call_id is not None and slot.id is None:
            slot.id = call_id
        if isinstance(call.get("type"), str) and call["type"]:
            slot.type = call["type"]
        for name, value in call.items():
            if name not in ("index", "id", "type", "function", "custom") and value is not None:
                slot.extras[name] = plain(value)
        custom = call.get("custom")
        fragment = ""
        if slot.type == "custom" or (isinstance(custom, Mapping) and "function" not in call):
            slot.type = "custom"  # a custom tool's call: its text input, in pieces
            custom = mapping(custom)
            if isinstance(custom.get("name"), str) and custom["name"]:
                slot.name = slot.custom_name = custom["name"]
            if isinstance(custom.get("input"), str):
                slot.custom_input.append(fragment := custom["input"])
        else:
            fn = mapping(call.get("function"))
            if isinstance(fn.get("name"), str) and fn["name"] and slot.name is None:
                slot.name = fn["name"]
            args = fn.get("arguments")
            if isinstance(args, str):
                slot.args.append(args)
                fragment = args
            elif args is not None:
                slot.args_obj = plain(args)
                fragment = dumps(slot.args_obj)
        number = slot.number
        if not slot.started and (slot.name is not None or fragment):
            slot.started = True
            name = slot.name or ""
            out.append(ToolCallStarted(
                index=number,
                id=slot.id or call_id_for(reply_seed(self._head), number),
                name=self._names.user(name) if self._names else name,
            ))
        if fragment and slot.started:
            out.append(ToolCallDelta(index=number, fragment=fragment))

    def _finish_early(self, number: int, out: list[StreamEvent]) -> None:
        """The call before a new one is finished once its arguments are a whole JSON object.

        Servers send a reply's calls one after another, so when the next call starts the one
        before is complete; its arguments are checked all the same (a prefix of a JSON object
        that parses is the whole object), since a server could still interleave fragments.
        Announcing it now lets a tool that is safe to start early start before the reply ends.
        """
        slot = self._slots[number]
        if slot.done or not slot.started or slot.type == "custom":
            return
        if slot.args_obj is None and not "".join(slot.args).strip():
            return  # no argument text yet: more may still come
        part = self._finished(number, slot, reply_seed(self._head))
        if part is not None and part.parse_error is None and isinstance(part.arguments, dict):
            slot.done = True
            out.append(ToolCallFinished(index=number, call=part))

    def _finish_calls(self, out: list[StreamEvent]) -> None:
        if self._finished_calls:
            return
        self._finished_calls = True
        seed = reply_seed(self._head)
        for number, slot in enumerate(self._slots):
            part = None if slot.done else self._finished(number, slot, seed)
            if part is not None:
                out.append(ToolCallFinished(index=number, call=part))

    def _finished(self, number: int, slot: _Slot, seed: str) -> ToolCallPart | None:
        """The call a slot holds as it stands (None for one of no shape toolwire reads)."""
        part = decode_call(slot.body(), number, seed, self._names)
        return part if isinstance(part, ToolCallPart) else None

    # ------------------------------------------------------------------ the end

    def body(self) -> dict[str, Any]:
        """The whole reply body this stream amounts to."""
        self._joins.flush()
        message: dict[str, Any] = {"role": "assistant"}
        if self._items:
            message["content"] = self._items + (
                [{"type": "text", "text": "".join(self._text)}] if self._text else [])
        elif self._text is not None:
            message["content"] = "".join(self._text)
        if self._refusal:
            message["refusal"] = "".join(self._refusal)
        for key, pieces in self._reasoning.items():
            message[key] = "".join(pieces)
        if self._details:
            message["reasoning_details"] = [self._details[k] for k in sorted(
                self._details, key=lambda k: (k[0] < 0, abs(k[0]), k[1]))]
        if self._slots:
            message["tool_calls"] = [slot.body() for slot in self._slots]
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": self._finish}
        if self._native is not None:
            choice["native_finish_reason"] = self._native
        body: dict[str, Any] = {**self._head, **self._extras, "choices": [choice]}
        if self._usage is not None:
            body["usage"] = self._usage
        return body

    def finish(self) -> Reply:
        for event in self._framer.close():
            self._event(event.data, [])
        if self._error is not None:
            raise self._error
        if not self._seen:
            raise StreamError("the stream ended before any chunk arrived", wire=WIRE)
        if self._finish is None and not self._done:
            raise StreamError("the stream ended before the reply was complete "
                              "(no finish_reason and no [DONE])", wire=WIRE)
        return decode_body(self.body(), self._request)


def _starts_another_call(slot: _Slot, call_id: str | None, call: Mapping[str, Any]) -> bool:
    """Whether a fragment for a taken index is really a new call (servers that reuse index 0).

    It is when it carries a different id, or, with no id at all, when it names a function and
    starts a new JSON object although the call in the slot already holds a complete one.
    """
    if call_id is not None:
        return slot.id is not None and call_id != slot.id
    fn = mapping(call.get("function"))
    args = fn.get("arguments")
    if not (isinstance(fn.get("name"), str) and fn["name"] and slot.name is not None):
        return False
    if not (isinstance(args, str) and args.lstrip().startswith("{")) or not slot.args:
        return False
    return slot.scan.whole(slot.args)


# =========================================================================== encode


def encode_stream(reply: Reply, *, request: Request | None = None) -> list[bytes]:
    """The reply as a Chat Completions SSE stream, ending with a usage chunk and ``[DONE]``."""
    names = name_map(request.tools) if request is not None else None
    top, choice_extras = reply_extras(reply)
    head: dict[str, Any] = {"id": reply_id(reply), "object": "chat.completion.chunk",
                            "created": 0, "model": reply.model or "", **top}
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    message = reply_message(reply, names)
    for key in ("reasoning", "reasoning_content"):
        if isinstance(message.get(key), str):
            deltas.extend({key: piece} for piece in text_pieces(message[key], keep_empty=True))
    for item in message.get("reasoning_details") or []:
        deltas.extend({"reasoning_details": [frag]} for frag in detail_fragments(item))
    content = message.get("content")
    if isinstance(content, str):
        deltas.extend({"content": piece} for piece in text_pieces(content, keep_empty=True))
    elif isinstance(content, list):  # reasoning came as a content item: stream typed chunks
        empty_end = content[-1:] == [{"type": "text", "text": ""}]
        items = content[:-1] if empty_end else content
        deltas.extend({"content": [chunk]} for item in items for chunk in thinking_chunks(item))
        if empty_end:  # as a string, so it stays a part of its own and joins no text item
            deltas.append({"content": ""})
    if isinstance(message.get("refusal"), str):
        deltas.extend({"refusal": piece}
                      for piece in text_pieces(message["refusal"], keep_empty=True))
    for number, raw in enumerate(message.get("tool_calls") or []):
        if raw.get("type") == "custom" or "function" not in raw:
            deltas.append({"tool_calls": [{"index": number, **raw}]})
            continue
        fn = raw["function"]
        first = {k: v for k, v in raw.items() if k != "function"}
        first.update(index=number, function={"name": fn["name"], "arguments": ""})
        deltas.append({"tool_calls": [first]})
        if fn["arguments"]:
            deltas.extend({"tool_calls": [{"index": number, "function": {"arguments": piece}}]}
                          for piece in text_pieces(fn["arguments"]))
    chunks = [{**head, "choices": [{"index": 0, "delta": d, "finish_reason": None}]}
              for d in deltas]
    chunks.append({**head, "choices": [{"index": 0, "delta": {},
                                        "finish_reason": finish_reason_of(reply),
                                        **choice_extras}]})
    chunks.append({**head, "choices": [], "usage": encode_usage(reply.usage)})
    out = [f"data: {dumps(c)}\n\n".encode() for c in chunks]
    out.append(b"data: [DONE]\n\n")
    return out
