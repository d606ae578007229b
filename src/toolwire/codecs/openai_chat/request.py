"""OpenAI Chat Completions: a canonical `Request` as a request body.

Owns `encode` (a canonical `Request` as the body the API documents, with a `Note` for every
change made to fit); reading a body back (`decode_request`) and checking a raw one
(`check_body`) are `inbound`'s. Pure; imports the transcript, the
shared codec modules and the chat `parts` and `schema`, never the wire's reply or stream.

Choices worth knowing: the system prompt is the first ``system`` message; tool results go out as
one ``tool`` message each, with ``Error: `` in front of error results and ``(no output)`` for an
empty one; arguments always go out as a string; empty call ids are replaced; ``tool_choice`` and
``parallel_tool_calls`` are left out when there are no tools. Either token-limit field decodes
into `Request.max_tokens`; encode sends ``max_completion_tokens`` unless the options hold
``max_tokens_field: "max_tokens"`` (what decoding a body that used the older field leaves).
Bodies are read in place and never changed, so decoded values (tool schemas) are shared with
the body, and encoded bodies share the request's values: neither side is mutated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolwire.codecs.base import (
    Encoded,
    Note,
    call_id_for,
    own_options,
)
from toolwire.codecs.media import check_limits
from toolwire.codecs.openai_chat import cache_fields
from toolwire.codecs.openai_chat.parts import (
    EMPTY_RESULT,
    ERROR_PREFIX,
    WIRE,
    Names,
    dropped_note,
    encode_call,
    is_refusal,
    part_subject,
    plain,
    wire_data,
)
from toolwire.codecs.openai_chat.reasoning import (
    REASONING_KEYS,
    content_item,
    merge_reasoning,
    reasoning_payload,
)
from toolwire.codecs.openai_chat.schema import (
    MAX_TOKENS_FIELD,
    encode_choice,
    encode_tools,
)
from toolwire.codecs.openai_media import (
    LIMITS,
    MOVED_TEXT,
    chat_item,
    moved_media,
)
from toolwire.codecs.openai_shared import TOOL_PLACES, put_others
from toolwire.codecs.traits import known
from toolwire.transcript import (
    MediaPart,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

"""Option key (never sent) naming the token-limit field a decoded body used, when it was the
older ``max_tokens``; encode then sends `Request.max_tokens` in that field again."""
ASSISTANT_KEYS = frozenset({"role", "content", "refusal", "tool_calls", *REASONING_KEYS})
USUAL_ASSISTANT_KEYS = frozenset({"role", "content", "tool_calls"})


# =========================================================================== encode


class _Encoder:
    """State for one request: notes, names, and ids rewritten for calls and their results."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self.names = Names(request.tools, lambda: [
            p.name for m in request.messages for p in m.parts if isinstance(p, ToolCallPart)])
        self.notes: list[Note] = []
        self.pending_ids: list[str] = []

    # ------------------------------------------------------------------ messages

    def message(self, index: int, message: Message) -> list[dict[str, Any]]:
        pd = message.provider_data
        extras = plain(wire_data(pd) or {}) if pd is not None else None
        role = message.role
        if role == "assistant":
            return self.assistant(index, message, extras)
        out: list[dict[str, Any]] = []
        if role == "tool":
            for j, part in enumerate(message.parts):
                if isinstance(part, ToolResultPart):
                    out.append(self.result(part))
                else:
                    self.drop(index, j, part)
            moved = moved_media(message.tool_results, index=index, notes=self.notes)
            return [*out, moved] if moved is not None else out
        parts = message.parts
        if len(parts) == 1 and extras is None:
            only = parts[0]
            if type(only) is TextPart and only.provider_data is None:  # the usual text turn
                return [{"role": role, "content": only.text}]
        results = [p for p in parts if isinstance(p, ToolResultPart)]
        out = [self.result(r) for r in results]
        if len(results) < len(message.parts) or not results:
            rest = [(j, p) for j, p in enumerate(message.parts)
                    if not isinstance(p, ToolResultPart)]
            body = {"role": message.role, "content": self.content(index, rest)}
            if extras:
                body.update(extras)
            out.append(body)
        return out

    def content(self, index: int, parts: Sequence[tuple[int, Part]]) -> Any:
        items: list[dict[str, Any]] = []
        for j, part in parts:
            if isinstance(part, TextPart):
                item: dict[str, Any] = {"type": "text", "text": part.text}
                if part.provider_data is not None and not is_refusal(part):
                    item.update(plain(wire_data(part.provider_data) or {}))
                items.append(item)
            elif isinstance(part, MediaPart):
                items.append(chat_item(part, subject=f"messages[{index}].parts[{j}]"))
            elif isinstance(part, OpaquePart) and part.wire == WIRE:
                items.append(plain(part.payload))
            elif (reasoning := content_item(part)) is not None:
                items.append(reasoning)
            else:
                self.drop(index, j, part)
        if (len(items) == 1 and len(items[0]) == 2 and "text" in items[0]
                and items[0].get("type") == "text"):
            return items[0]["text"]
        return items if items else ""

    def assistant(
        self, index: int, message: Message, extras: dict[str, Any] | None
    ) -> list[dict[str, Any]]:
        texts: list[tuple[int, Part]] = []  # text, and reasoning that came as a content item
        refusals: list[str] = []
        others: list[dict[str, Any]] = []
        calls: list[dict[str, Any]] = []
        reasoning: dict[str, Any] = {}
        self.pending_ids = []
        for j, part in enumerate(message.parts):
            if isinstance(part, TextPart):
                if part.provider_data is not None and is_refusal(part):
                    refusals.append(part.text)
                else:
                    texts.append((j, part))
            elif isinstance(part, ToolCallPart):
                calls.append(encode_call(part, self.names.wire(part.name)) if part.id
                             else self.call(index, len(calls), part))
            elif isinstance(part, ReasoningPart):
                payload = reasoning_payload(part)
                if content_item(part) is not None:
                    texts.append((j, part))
                elif payload is None:
                    self.notes.append(dropped_note(part_subject(index, j), part))
                else:
                    merge_reasoning(reasoning, payload)
            elif isinstance(part, OpaquePart) and part.wire == WIRE:
                (calls if part.kind == "custom_tool_call" else others).append(plain(part.payload))
            else:
                self.drop(index, j, part)
        out: dict[str, Any] = {"role": "assistant"}
        content: Any
        only = texts[0][1] if len(texts) == 1 else None
        if isinstance(only, TextPart) and only.provider_data is None:
            content = only.text
        else:
            content = self.content(index, texts)
        if others:
            content = ([{"type": "text", "text": content}] if isinstance(content, str) and content
                       else content if isinstance(content, list) else []) + others
        if content == "" and calls:
            content = None
        out["content"] = content
        if refusals:
            out["refusal"] = "".join(refusals)
        if reasoning:
            out.update(reasoning)
        if calls:
            out["tool_calls"] = calls
        if extras:
            out.update(extras)
        return [out]

    def call(self, index: int, position: int, part: ToolCallPart) -> dict[str, Any]:
        body = encode_call(part, self.names.wire(part.name))
        if not part.id:
            new_id = call_id_for(f"{self.request.model}:messages[{index}]", position)
            body["id"] = new_id
            self.pending_ids.append(new_id)
            self.notes.append(Note(kind="id_rewritten", subject=f"messages[{index}]",
                                   detail=f"empty call id sent as {new_id!r}"))
        return body

    def result(self, part: ToolResultPart) -> dict[str, Any]:
        call_id = part.call_id
        if not call_id:
            call_id = self.pending_ids.pop(0) if self.pending_ids else call_id_for("result", 0)
        content = part.text or (MOVED_TEXT if part.media else "")
        if part.is_error and not content.startswith("Error:"):
            content = ERROR_PREFIX + content
        elif not part.is_error and content == "":
            content = EMPTY_RESULT
        out: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": content}
        if part.provider_data is not None:
            out.update(plain(wire_data(part.provider_data) or {}))
        return out

    def drop(self, index: int, position: int, part: Part) -> None:
        self.notes.append(dropped_note(part_subject(index, position), part))


def _usual(message: Message, out: list[dict[str, Any]], enc: _Encoder) -> bool:
    """Write the usual message (plain text, calls with ids, results) to ``out`` and say True;
    say False, writing nothing, for anything the general path must handle."""
    role, parts = message.role, message.parts
    if role == "tool":
        results: list[dict[str, Any]] = []
        for part in parts:
            if type(part) is not ToolResultPart or part.provider_data is not None or (
                    not part.call_id):
                return False
            if type(part.content) is not str and part.media:
                return False
            content = part.content if type(part.content) is str else part.text
            if part.is_error:
                if not content.startswith("Error:"):
                    content = ERROR_PREFIX + content
            elif not content:
                content = EMPTY_RESULT
            results.append({"role": "tool", "tool_call_id": part.call_id, "content": content})
        out += results
        return True
    if role == "assistant":
        text: str | None = None
        calls: list[dict[str, Any]] = []
        for part in parts:
            if type(part) is ToolCallPart:
                if not part.id or part.provider_data is not None or part.freeform:
                    return False
                raw = part.raw_arguments
                calls.append({"id": part.id, "type": "function", "function": {
                    "name": enc.names.wire(part.name),
                    "arguments": raw if raw is not None else part.arguments_text}})
            elif (type(part) is TextPart and text is None and not calls
                  and part.provider_data is None):
                text = part.text
            else:
                return False
        enc.pending_ids = []
        if calls:
            out.append({"role": "assistant", "content": text or None, "tool_calls": calls})
        else:
            out.append({"role": "assistant", "content": text or ""})
        return True
    if len(parts) == 1:
        only = parts[0]
        if type(only) is TextPart and only.provider_data is None:
            out.append({"role": role, "content": only.text})
            return True
    return False


def _plain_messages(request: Request, names: Names) -> list[dict[str, Any]] | None:
    """The messages of a request holding only what `_usual` writes, with no media (so none
    for `check_limits` to refuse), written in one pass, each tool name looked up once; None
    for any other request, which takes the message-by-message path."""
    out: list[dict[str, Any]] = []
    if request.system is not None:
        out.append({"role": "system", "content": request.system})
    append = out.append
    sent: dict[str, str] = {}  # a tool's name as sent, by its own
    part: Any  # told apart by its exact type, the cheapest test
    for message in request.messages:
        if message.provider_data is not None:
            return None
        role, parts = message.role, message.parts
        if role == "tool":
            for part in parts:
                content = part.content if type(part) is ToolResultPart else None
                if type(content) is not str or part.provider_data is not None \
                        or not part.call_id:
                    return None
                if part.is_error:
                    if not content.startswith("Error:"):
                        content = ERROR_PREFIX + content
                elif not content:
                    content = EMPTY_RESULT
                append({"role": "tool", "tool_call_id": part.call_id, "content": content})
        elif role == "assistant":
            text: str | None = None
            calls: list[dict[str, Any]] = []
            for part in parts:
                kind = type(part)
                if kind is ToolCallPart:
                    if not part.id or part.provider_data is not None or part.freeform:
                        return None
                    name = part.name
                    wire = sent.get(name)
                    if wire is None:
                        wire = sent[name] = names.wire(name)
                    raw = part.raw_arguments
                    calls.append({"id": part.id, "type": "function", "function": {
                        "name": wire, "arguments": raw if raw is not None
                        else part.arguments_text}})
                elif kind is TextPart and text is None and not calls \
                        and part.provider_data is None:
                    text = part.text
                else:
                    return None
            if calls:
                append({"role": "assistant", "content": text or None, "tool_calls": calls})
            else:
                append({"role": "assistant", "content": text or ""})
        elif len(parts) == 1 and type(part := parts[0]) is TextPart \
                and part.provider_data is None:
            append({"role": role, "content": part.text})
        else:
            return None
    return out


def encode(request: Request) -> Encoded:
    """The request as an OpenAI Chat Completions body, with notes on what was changed."""
    enc = _Encoder(request)
    found = known(request)  # EVERY while the general path is checked against this one
    plain_ones = _plain_messages(request, enc.names) if found is None or not found.verbatim \
        else None
    if plain_ones is not None:
        messages = plain_ones
    else:
        check_limits(request, WIRE, LIMITS)
        messages = []
        if request.system is not None:
            messages.append({"role": "system", "content": request.system})
        for i, message in enumerate(request.messages):
            if message.provider_data is None and _usual(message, messages, enc):
                continue
            messages.extend(enc.message(i, message))
    body: dict[str, Any] = {"model": request.model, "messages": messages}
    mine = own_options(request.provider_options, WIRE, enc.notes)
    options = plain(mine) if mine else mine  # an empty one is new already: nothing to copy
    tools = encode_tools(request.tools, enc.names, enc.notes, options)
    extra_tools, places = options.pop("tools", None), options.pop(TOOL_PLACES, None)
    if isinstance(extra_tools, list):
        put_others(tools, extra_tools, places)
    if tools:
        body["tools"] = tools
    if request.tool_choice is not None:
        encode_choice(request.tool_choice, enc.names, enc.notes, body,
                      frozenset(t.name for t in request.tools if t.freeform))
    field = "max_tokens" if options.pop(MAX_TOKENS_FIELD, None) == "max_tokens" else (
        "max_completion_tokens")
    if request.max_tokens is not None:
        body[field] = request.max_tokens
        options.pop(field, None)
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    body.update(options)
    if not tools:
        for key in ("tool_choice", "parallel_tool_calls"):
            if key in body:
                del body[key]
                enc.notes.append(Note(kind="field_dropped", subject=key,
                                      detail="left out: the API refuses it without tools"))
    if request.cache is not None:
        enc.notes.extend(cache_fields(body, request.cache))
    return Encoded(body=body, notes=(*enc.names.notes(), *enc.notes))


# =========================================================================== decode


# ------------------------------------------------------------------------ what the provider refuses
