"""OpenAI Chat Completions: request bodies, both ways.

Owns `encode` (a canonical `Request` as the body the API documents, with a `Note` for every
change made to fit) and `decode_request` (any such body back to a `Request`). Pure; imports only
the transcript, `_base`, `_schema` and the shared chat pieces.

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
    own_options,
    role_problem,
    tools_lack_schemas,
)
from toolwire.codecs.openai_chat.parts import (
    REASONING_KEYS,
    WIRE,
    Names,
    assistant_parts,
    content_parts,
    dropped_opaque_note,
    dropped_reasoning_note,
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
from toolwire.codecs.strict import StrictSchemaError, strict_schema
from toolwire.transcript import (
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    Request,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
)

ERROR_PREFIX = "Error: "
EMPTY_RESULT = "(no output)"

_DEFAULT_SCHEMA = {"type": "object", "properties": {}}
MAX_TOKENS_FIELD = "max_tokens_field"
"""Option key (never sent) naming the token-limit field a decoded body used, when it was the
older ``max_tokens``; encode then sends `Request.max_tokens` in that field again."""
_ASSISTANT_KEYS = frozenset({"role", "content", "refusal", "tool_calls", *REASONING_KEYS})
_USUAL_ASSISTANT_KEYS = frozenset({"role", "content", "tool_calls"})
_USUAL_TOOL_KEYS = frozenset({"type", "function"})
_USUAL_FUNCTION_KEYS = frozenset({"name", "description", "parameters"})


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
            return out
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
            elif isinstance(part, OpaquePart) and part.wire == WIRE:
                items.append(plain(part.payload))
            else:
                self.drop(index, j, part)
        if (len(items) == 1 and len(items[0]) == 2 and "text" in items[0]
                and items[0].get("type") == "text"):
            return items[0]["text"]
        return items if items else ""

    def assistant(
        self, index: int, message: Message, extras: dict[str, Any] | None
    ) -> list[dict[str, Any]]:
        texts: list[tuple[int, TextPart]] = []
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
                if part.id:
                    calls.append(encode_call(part, self.names.wire(part.name)))
                else:
                    calls.append(self.call(index, len(calls), part))
            elif isinstance(part, ReasoningPart):
                payload = reasoning_payload(part)
                if payload is None:
                    self.notes.append(dropped_reasoning_note(part_subject(index, j)))
                else:
                    merge_reasoning(reasoning, payload)
            elif isinstance(part, OpaquePart) and part.wire == WIRE:
                if part.kind == "custom_tool_call":
                    calls.append(plain(part.payload))
                else:
                    others.append(plain(part.payload))
            else:
                self.drop(index, j, part)
        out: dict[str, Any] = {"role": "assistant"}
        content: Any
        if len(texts) == 1 and texts[0][1].provider_data is None:
            content = texts[0][1].text
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
        content = part.content
        if part.is_error and not content.startswith("Error:"):
            content = ERROR_PREFIX + content
        elif not part.is_error and content == "":
            content = EMPTY_RESULT
        out: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": content}
        if part.provider_data is not None:
            out.update(plain(wire_data(part.provider_data) or {}))
        return out

    def drop(self, index: int, position: int, part: Part) -> None:
        subject = part_subject(index, position)
        if isinstance(part, ReasoningPart):
            self.notes.append(dropped_reasoning_note(subject))
        elif isinstance(part, OpaquePart):
            self.notes.append(dropped_opaque_note(subject, part))
        else:
            self.notes.append(Note(kind="field_dropped", subject=subject,
                                   detail=f"a {type(part).__name__} has no place in this message"))

    # ------------------------------------------------------------------ tools

    def tool(self, spec: ToolSpec) -> dict[str, Any]:
        fn: dict[str, Any] = {"name": self.names.wire(spec.name)}
        if spec.description:
            fn["description"] = spec.description
        schema: Any = spec.input_schema
        if type(schema) is not dict:  # a dict goes out as it is: bodies are never changed
            schema = plain(schema)
        if spec.strict:
            try:
                schema, changes = strict_schema(schema)
            except StrictSchemaError as exc:
                self.notes.append(Note(kind="schema_rewritten", subject=spec.name,
                                       detail=f"sent without strict mode: {exc}"))
            else:
                fn["strict"] = True
                if changes:
                    self.notes.append(Note(kind="schema_rewritten", subject=spec.name,
                                           detail="; ".join(changes)))
        fn["parameters"] = schema
        return {"type": "function", "function": fn}

    def choice(self, choice: ToolChoice, body: dict[str, Any]) -> None:
        if choice.mode == "tool" and choice.name:
            body["tool_choice"] = {"type": "function",
                                   "function": {"name": self.names.wire(choice.name)}}
        elif choice.mode == "tool":
            body["tool_choice"] = "required"
            self.notes.append(Note(kind="choice_changed", subject="tool_choice",
                                   detail="a named choice without a name was sent as 'required'"))
        else:
            body["tool_choice"] = choice.mode
        if choice.parallel is not None:
            body["parallel_tool_calls"] = choice.parallel


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
            content = part.content
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
                if not part.id or part.provider_data is not None:
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
    tools = [enc.tool(t) for t in request.tools]
    extra_tools = options.pop("tools", None)
    if isinstance(extra_tools, list):
        tools.extend(extra_tools)
    if tools:
        body["tools"] = tools
    if request.tool_choice is not None:
        enc.choice(request.tool_choice, body)
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
    return Encoded(body=body, notes=(*enc.names.notes(), *enc.notes))


# =========================================================================== decode


_RESULT_KEYS = frozenset({"role", "tool_call_id", "content"})
_PLAIN_KEYS = frozenset({"role", "content"})


def _result(message: Mapping[str, Any], call_id: str, names: Mapping[str, str]) -> ToolResultPart:
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "".join(p.text for p in content_parts(content, keep_empty=True)
                       if isinstance(p, TextPart))
    else:
        text = ""
    is_error = text.startswith(ERROR_PREFIX)
    if is_error:
        text = text[len(ERROR_PREFIX):]
    elif text == EMPTY_RESULT:
        text = ""
    extras = None if message.keys() <= _RESULT_KEYS else extras_of(message, _RESULT_KEYS)
    return ToolResultPart(call_id=call_id, content=text, is_error=is_error,
                          name=names.get(call_id), provider_data={WIRE: extras} if extras else None)


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
            if keys == _RESULT_KEYS:
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
            continue
        role = msg.get("role")
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if type(call_id) is not str or not call_id or call_id == "null":
                call_id = real_id(call_id) or (pending.pop(0) if pending else "")
            content = msg.get("content")
            if (type(content) is str and content and content[0] != "E" and content != EMPTY_RESULT
                    and msg.keys() <= _RESULT_KEYS):  # the usual result, read directly
                results.append(ToolResultPart(call_id=call_id, content=content,
                                              name=call_names.get(call_id)))
            else:
                results.append(_result(msg, call_id, call_names))
            continue
        if results:
            out.append(Message(role="tool", parts=tuple(results)))
            results = []
        if role == "assistant":
            pending = []
            parts = assistant_parts(msg, seed=f"messages[{index}]", names=None,
                                    made_ids=pending)
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
        else:  # developer, function, anything newer: a user/system message that keeps its role
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


def _tool(raw: Mapping[str, Any]) -> ToolSpec | None:
    fn = raw.get("function")
    if type(fn) is not dict and not isinstance(fn, Mapping):
        return None
    if raw.get("type", "function") != "function":
        return None
    name = fn.get("name")
    if not isinstance(name, str):
        return None
    schema = fn.get("parameters")
    description = fn.get("description")
    if type(schema) is not dict:  # a dict is kept as it is: request values are never changed
        schema = plain(schema) if isinstance(schema, Mapping) else dict(_DEFAULT_SCHEMA)
    return ToolSpec(
        name=name,
        description=description if isinstance(description, str) else "",
        input_schema=schema,
        strict=fn.get("strict") is True,
    )


def _choice(raw: Any, parallel: Any) -> ToolChoice | None:
    par = parallel if isinstance(parallel, bool) else None
    if raw in ("auto", "required", "none"):
        return ToolChoice(mode=raw, parallel=par)
    if raw is not None and isinstance(raw, Mapping) and raw.get("type") == "function":
        fn = raw.get("function")
        if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
            return ToolChoice(mode="tool", name=fn["name"], parallel=par)
    if raw is None and par is not None:
        return ToolChoice(mode="auto", parallel=par)
    return None


def _is_int(value: Any) -> bool:
    return type(value) is int or (isinstance(value, int) and not isinstance(value, bool))


# body keys read into Request fields (each kept in the options when it cannot be read)
_REQUEST_KEYS = frozenset({
    "model", "messages", "tools", "tool_choice", "parallel_tool_calls", "max_completion_tokens",
    "max_tokens", "temperature", "stream", "stream_options",
})


def decode_request(body: Mapping[str, Any]) -> Request:
    """Any Chat Completions request body as a `Request`; unknown keys go to provider_options.

    The body is read, never changed; tool schemas are shared with it, not copied.
    """
    rest = extras_of(body, _REQUEST_KEYS) or {}
    get = body.get
    raw_messages = get("messages")
    system, messages = _messages(raw_messages if isinstance(raw_messages, list) else [])
    model = get("model", "")
    tools: list[ToolSpec] = []
    extra_tools: list[Any] = []
    raw_tools = get("tools")
    for raw in raw_tools if isinstance(raw_tools, list) else ():
        if type(raw) is dict and raw.keys() == _USUAL_TOOL_KEYS:  # the usual tool, read directly
            fn = raw["function"]
            if type(fn) is dict and fn.keys() == _USUAL_FUNCTION_KEYS and raw["type"] == "function":
                name, description, schema = fn["name"], fn["description"], fn["parameters"]
                if type(name) is str and type(description) is str and type(schema) is dict:
                    tools.append(ToolSpec(name=name, description=description,
                                          input_schema=schema))
                    continue
        spec = _tool(raw) if type(raw) is dict or isinstance(raw, Mapping) else None
        if spec is None:
            extra_tools.append(plain(raw))
        else:
            tools.append(spec)
    if extra_tools:
        rest["tools"] = extra_tools
    choice = None
    if "tool_choice" in body or "parallel_tool_calls" in body:
        choice = _choice(get("tool_choice"), get("parallel_tool_calls"))
        if choice is None:
            for key in ("tool_choice", "parallel_tool_calls"):
                if key in body:
                    rest[key] = plain(body[key])
        elif "tool_choice" in body and body["tool_choice"] is None:
            rest["tool_choice"] = None
    limit = get("max_completion_tokens")
    legacy = get("max_tokens")
    max_tokens: int | None = None
    if _is_int(limit):
        max_tokens = limit
        if "max_tokens" in body:
            rest["max_tokens"] = plain(legacy)
    else:
        if "max_completion_tokens" in body:
            rest["max_completion_tokens"] = plain(limit)
        if _is_int(legacy):
            max_tokens = legacy
            rest[MAX_TOKENS_FIELD] = "max_tokens"  # remembered, so encode sends the same field
        elif "max_tokens" in body:
            rest["max_tokens"] = plain(legacy)
    temperature = get("temperature")
    stream = get("stream") is True
    if "stream_options" in body:
        stream_options = body["stream_options"]
        if not (stream and stream_options == {"include_usage": True}):
            rest["stream_options"] = plain(stream_options)
    return Request(
        model=model if isinstance(model, str) else str(model),
        messages=tuple(messages),
        system=system,
        tools=tuple(tools),
        tool_choice=choice,
        max_tokens=max_tokens,
        temperature=None if temperature is None else float(temperature)
        if isinstance(temperature, int | float) else None,
        stream=stream,
        provider_options={WIRE: rest} if rest else None,
    )


# ------------------------------------------------------------------------ what the provider refuses


def check_body(body: dict[str, Any]) -> str | None:
    """The first rule the raw ``body`` breaks, worded as the provider words it, or None."""
    if not body.get("tools") and ("tool_choice" in body or "parallel_tool_calls" in body):
        return "'tool_choice' is only allowed when 'tools' are specified"
    return role_problem(body.get("messages"),
                  ("system", "developer", "user", "assistant", "tool", "function")) or \
        tools_lack_schemas(body.get("tools"), "")
