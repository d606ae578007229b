"""OpenAI Chat Completions: request bodies, both ways, and what the provider refuses in one.

Owns `encode` (a canonical `Request` as the body the API documents, with a `Note` for every
change made to fit), `decode_request` (any such body back to a `Request`) and `check_body` (the
first rule a raw body breaks, worded as the API words it). Pure; imports the transcript, the
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

from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.codecs.base import (
    Encoded,
    Note,
    call_id_for,
    list_at,
    own_options,
    role_problem,
    tools_lack_schemas,
    wrong_shape,
)
from toolwire.codecs.media import check_limits
from toolwire.codecs.model_checks import chat_model_problem
from toolwire.codecs.openai_chat import cache_fields, media_problem
from toolwire.codecs.openai_chat.parts import (
    EMPTY_RESULT,
    ERROR_PREFIX,
    REASONING_KEYS,
    RESULT_KEYS,
    WIRE,
    Names,
    assistant_parts,
    content_item,
    content_parts,
    decode_result,
    dropped_note,
    encode_call,
    extras_of,
    is_refusal,
    merge_reasoning,
    part_subject,
    plain,
    plain_calls,
    real_id,
    reasoning_payload,
    wire_data,
)
from toolwire.codecs.openai_chat.schema import (
    MAX_TOKENS_FIELD,
    decode_choice,
    decode_max_tokens,
    decode_tools,
    encode_choice,
    encode_tools,
)
from toolwire.codecs.openai_media import (
    LIMITS,
    MOVED_TEXT,
    chat_item,
    moved_media,
    restore_media,
)
from toolwire.codecs.openai_shared import TOOL_PLACES, keep_others, put_others
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
_ASSISTANT_KEYS = frozenset({"role", "content", "refusal", "tool_calls", *REASONING_KEYS})
_USUAL_ASSISTANT_KEYS = frozenset({"role", "content", "tool_calls"})


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


def encode(request: Request) -> Encoded:
    """The request as an OpenAI Chat Completions body, with notes on what was changed."""
    check_limits(request, WIRE, LIMITS)
    enc = _Encoder(request)
    messages: list[dict[str, Any]] = []
    if request.system is not None:
        messages.append({"role": "system", "content": request.system})
    for i, message in enumerate(request.messages):
        if message.provider_data is None and _usual(message, messages, enc):
            continue
        messages.extend(enc.message(i, message))
    body: dict[str, Any] = {"model": request.model, "messages": messages}
    options = plain(own_options(request.provider_options, WIRE, enc.notes))
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


_PLAIN_KEYS = frozenset({"role", "content"})

def _messages(raw: list[Any]) -> tuple[str | None, list[Message]]:
    system: str | None = None
    start = 0
    first = raw[0] if raw else None
    if ((type(first) is dict or isinstance(first, Mapping)) and len(first) == 2
            and first.get("role") == "system"
            and isinstance(first.get("content"), str)):
        system, start = first["content"], 1
    out: list[Message] = []
    results: list[ToolResultPart] = []
    call_names: dict[str, str] = {}
    pending: list[str] = []
    for index in range(start, len(raw)):
        msg = raw[index]
        if type(msg) is dict:  # the usual messages first, read with the fewest steps
            keys = msg.keys()
            made: Message | None = None
            if keys == RESULT_KEYS:
                call_id, content = msg["tool_call_id"], msg["content"]
                if (msg["role"] == "tool" and type(call_id) is str and call_id
                        and call_id != "null" and type(content) is str and content
                        and content[0] != "E" and content != EMPTY_RESULT):
                    results.append(ToolResultPart(call_id=call_id, content=content,
                                                  name=call_names.get(call_id)))
                    continue
            elif keys == _PLAIN_KEYS:
                role, content = msg["role"], msg["content"]
                if type(content) is str and (role == "user" or role == "system"):
                    made = Message(role=role, parts=(TextPart(text=content),))
                elif type(content) is str and role == "assistant":
                    pending, call_names = [], {}
                    made = Message(role=role, parts=(TextPart(text=content),) if content else ())
            elif keys == _USUAL_ASSISTANT_KEYS:
                calls, content = msg["tool_calls"], msg["content"]
                if (msg["role"] == "assistant" and type(calls) is list
                        and (content is None or type(content) is str)):
                    usual = plain_calls(calls, None)
                    if usual is not None:
                        pending = []
                        call_names = {p.id: p.name for p in usual}
                        made = Message(role="assistant", parts=(
                            (TextPart(text=content), *usual) if content else tuple(usual)))
            if made is not None:
                if results:
                    out.append(Message(role="tool", parts=tuple(results)))
                    results = []
                out.append(made)
                continue
        elif not isinstance(msg, Mapping):
            raise wrong_shape(f"messages[{index}]", "an object (a message)", msg)
        role = msg.get("role")
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if type(call_id) is not str or not call_id or call_id == "null":
                call_id = real_id(call_id) or (pending.pop(0) if pending else "")
            content = msg.get("content")
            if (type(content) is str and content and content[0] != "E" and content != EMPTY_RESULT
                    and msg.keys() <= RESULT_KEYS):  # the usual result, read directly
                results.append(ToolResultPart(call_id=call_id, content=content,
                                              name=call_names.get(call_id)))
            else:
                results.append(decode_result(msg, call_id, call_names))
            continue
        if results and role == "user" and restore_media(results, msg.get("content")):
            continue
        if results:
            out.append(Message(role="tool", parts=tuple(results)))
            results = []
        if role == "assistant":
            pending = []
            parts = assistant_parts(msg, seed=f"messages[{index}]", names=None,
                                    made_ids=pending, where=f"messages[{index}]")
            call_names = {}
            for part in parts:
                if type(part) is ToolCallPart:
                    call_names[part.id] = part.name
            if msg.keys() <= _ASSISTANT_KEYS:
                out.append(Message(role="assistant", parts=tuple(parts)))
            else:
                extras = extras_of(msg, _ASSISTANT_KEYS)
                out.append(Message(role="assistant", parts=tuple(parts),
                                   provider_data={WIRE: extras} if extras else None))
            continue
        extras = None if msg.keys() <= _PLAIN_KEYS else extras_of(msg, _PLAIN_KEYS)
        if role == "system" or role == "user":
            canonical = role
        elif role not in ("developer", "function"):
            raise wrong_shape(f"messages[{index}].role", "'system', 'developer', 'user', "
                              "'assistant', 'tool' or 'function'", role)
        else:  # developer, function: a user/system message that keeps its role
            canonical = "system" if role == "developer" else "user"
            extras = extras or {}
            extras["role"] = plain(role)
        content = msg.get("content")
        out.append(Message(role=canonical,  # type: ignore[arg-type]
                           parts=(TextPart(text=content),) if type(content) is str
                           else tuple(content_parts(content, keep_empty=True)),
                           provider_data={WIRE: extras} if extras else None))
    if results:
        out.append(Message(role="tool", parts=tuple(results)))
    return system, out


# body keys read into Request fields (each kept in the options when it cannot be read)
_REQUEST_KEYS = frozenset({
    "model", "messages", "tools", "tool_choice", "parallel_tool_calls", "max_completion_tokens",
    "max_tokens", "temperature", "stream", "stream_options",
})


def decode_request(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
) -> Request:
    """Any Chat Completions request body as a `Request`; unknown keys go to provider_options.

    The body is read, never changed; tool schemas are shared with it, not copied. ``model``
    and ``stream`` (what a URL said) count only when the body names no model or has no
    ``stream`` key.
    """
    rest = extras_of(body, _REQUEST_KEYS) or {}
    get = body.get
    system, messages = _messages(list_at(get("messages"), "messages"))
    name = get("model", "")
    if model is not None and (name is None or name == ""):
        name = model
    tools, extra_tools = decode_tools(get("tools"), rest)
    keep_others(get("tools"), extra_tools, rest)
    choice = decode_choice(body, rest)
    max_tokens = decode_max_tokens(body, rest)
    temperature = get("temperature")
    streams = get("stream") is True if "stream" in body or stream is None else stream
    if "stream_options" in body:
        stream_options = body["stream_options"]
        if not (streams and stream_options == {"include_usage": True}):
            rest["stream_options"] = plain(stream_options)
    return Request(
        model=name if isinstance(name, str) else str(name),
        messages=tuple(messages),
        system=system,
        tools=tuple(tools),
        tool_choice=choice,
        max_tokens=max_tokens,
        temperature=None if temperature is None else float(temperature)
        if isinstance(temperature, int | float) else None,
        stream=streams,
        provider_options={WIRE: rest} if rest else None,
    )


# ------------------------------------------------------------------------ what the provider refuses


def check_body(body: dict[str, Any]) -> str | None:
    """The first rule the raw ``body`` breaks, worded as the provider words it, or None."""
    if not body.get("tools") and ("tool_choice" in body or "parallel_tool_calls" in body):
        return "'tool_choice' is only allowed when 'tools' are specified"
    return role_problem(body.get("messages"),
                  ("system", "developer", "user", "assistant", "tool", "function")) or \
        tools_lack_schemas(body.get("tools"), "") or media_problem(body) or \
        chat_model_problem(body)
