"""Ollama native chat: a canonical `Request` as an ``/api/chat`` body.

Owns `encode` (a body with a note for every change made to fit: no tool choice, results
without an error flag, options) and `encode_usual`, the same body written in one pass for a
request of the usual messages only; reading a body back and checking a raw one are `inbound`'s.
Pure: imports only the transcript, the error tree, the codec base and this wire's ``parts``
and ``schema``; no HTTP, no vendor SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.codecs.base import (
    Encoded,
    NameMap,
    Note,
    own_options,
)
from toolwire.codecs.ollama_chat.parts import (
    WIRE,
    encode_assistant,
    encode_media,
    is_generated,
    names_for,
    note_dropped,
    own,
    part_subject,
    with_extras,
)
from toolwire.codecs.ollama_chat.schema import encode_tool
from toolwire.transcript import (
    MediaPart,
    Message,
    Request,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
)

ERROR_PREFIX = "Error: "

EMPTY_RESULT = "(no output)"

BODY_KEYS = frozenset({"model", "messages", "tools", "stream", "options"})


# --------------------------------------------------------------------------- encode


def _choice_allows_tools(choice: ToolChoice, has_tools: bool, notes: list[Note]) -> bool:
    """Note what the wire cannot express; False when the tools must be left out."""
    if choice.parallel is False:
        notes.append(Note(kind="choice_changed", subject="tool_choice",
                          detail="parallel=False cannot be expressed; the model may make "
                                 "several calls"))
    if choice.mode == "none":
        if has_tools:
            notes.append(Note(kind="choice_changed", subject="tool_choice",
                              detail="'none' honoured by leaving the tools out of the request"))
        return False
    if choice.mode == "required":
        notes.append(Note(kind="choice_changed", subject="tool_choice",
                          detail="'required' cannot be expressed (no tool_choice on this wire); "
                                 "the model may answer without a call"))
    elif choice.mode == "tool":
        notes.append(Note(kind="choice_changed", subject="tool_choice",
                          detail=f"forcing tool {choice.name!r} cannot be expressed (no "
                                 "tool_choice on this wire); the model chooses freely"))
    return True


def _result_text(part: ToolResultPart) -> str:
    content = (part.content if type(part.content) is str else part.text) or EMPTY_RESULT
    if part.is_error and not content.startswith("Error:"):
        content = ERROR_PREFIX + content
    return content


def _encode_result(part: ToolResultPart, m_index: int, p_index: int, names: NameMap,
                   call_names: Mapping[str, str], notes: list[Note]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "tool"}
    name = part.name if part.name is not None else call_names.get(part.call_id)
    if name is not None:
        out["tool_name"] = names.wire(name)
    else:
        notes.append(Note(kind="field_dropped", subject=part_subject(m_index, p_index),
                          detail=f"result for call {part.call_id!r} has no tool name; the "
                                 "server matches it by position only"))
    if not is_generated(part.call_id):
        out["tool_call_id"] = part.call_id
    out["content"] = _result_text(part)
    if type(part.content) is not str and part.media:  # a plain string holds none
        subject = part_subject(m_index, p_index)
        images, texts = encode_media([(f"{subject}.media[{n}]", m)
                                      for n, m in enumerate(part.media)], notes)
        if texts:
            out["content"] = "\n".join([out["content"], *texts])
        if images:
            out["images"] = images
    return out if part.provider_data is None else with_extras(out, own(part.provider_data))


def _encode_message(msg: Message, m_index: int, names: NameMap, call_names: dict[str, str],
                    notes: list[Note]) -> list[dict[str, Any]]:
    if msg.role == "assistant":
        return [encode_assistant(msg, m_index, names, notes, keep_generated_id=False,
                                  call_names=call_names)]
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    media: list[tuple[str, MediaPart]] = []
    for p_index, part in enumerate(msg.parts):
        if isinstance(part, ToolResultPart):
            out.append(_encode_result(part, m_index, p_index, names, call_names, notes))
        elif isinstance(part, TextPart) and msg.role != "tool":
            texts.append(part.text)
        elif isinstance(part, TextPart):
            notes.append(Note(kind="part_dropped", subject=part_subject(m_index, p_index),
                              detail="text outside a tool result cannot be sent in a tool message"))
        elif isinstance(part, MediaPart) and msg.role != "tool":
            media.append((part_subject(m_index, p_index), part))
        else:
            note_dropped(part, part_subject(m_index, p_index), notes)
    if msg.role != "tool" and (texts or media or not out):
        images, placeholders = encode_media(media, notes)
        body: dict[str, Any] = {"role": msg.role, "content": "\n".join(
            ["".join(texts), *placeholders]) if placeholders else "".join(texts)}
        if images:
            body["images"] = images
        out.append(with_extras(body, own(msg.provider_data)))
    return out


def encode(request: Request) -> Encoded:
    """The ``/api/chat`` body for a request, with a note for every change made to fit the wire."""
    names = names_for(request)
    notes: list[Note] = names.notes()
    messages: list[dict[str, Any]] = []
    if request.system is not None:
        messages.append({"role": "system", "content": request.system})
    call_names: dict[str, str] = {}
    for index, msg in enumerate(request.messages):
        messages.extend(_encode_message(msg, index, names, call_names, notes))
    return _body(request, names, notes, messages)


def encode_usual(request: Request) -> Encoded | None:
    """`encode` of a request holding only the usual messages (texts from the user, texts and
    calls with object arguments from the assistant, named text results), its messages
    written in one pass; None for any other request, which `encode` takes."""
    names = names_for(request)
    messages = _usual_messages(request, names)
    return None if messages is None else _body(request, names, names.notes(), messages)


def _usual_messages(request: Request, names: NameMap) -> list[dict[str, Any]] | None:
    """The messages `encode` writes for a request of the usual messages only (None for any
    other): the same dicts, without a note, each message looked at once."""
    out: list[dict[str, Any]] = []
    if request.system is not None:
        out.append({"role": "system", "content": request.system})
    append = out.append
    wire = names.to_wire.get
    call_names: dict[str, str] = {}
    part: Any  # told apart by its exact type, the cheapest test
    for message in request.messages:
        if message.provider_data is not None or message.tools:
            return None
        role, parts = message.role, message.parts
        if role == "tool":
            for part in parts:
                if type(part) is not ToolResultPart or part.provider_data is not None:
                    return None
                content, call_id = part.content, part.call_id
                name = part.name if part.name is not None else call_names.get(call_id)
                if type(content) is not str or name is None:
                    return None
                if not content:
                    content = EMPTY_RESULT
                if part.is_error and not content.startswith("Error:"):
                    content = ERROR_PREFIX + content
                result = {"role": "tool", "tool_name": wire(name, name)}
                if not is_generated(call_id):
                    result["tool_call_id"] = call_id
                result["content"] = content
                append(result)
        elif role == "assistant":
            texts: list[str] = []
            calls: list[dict[str, Any]] = []
            for part in parts:
                kind = type(part)
                if kind is TextPart:
                    texts.append(part.text)
                    continue
                args = part.arguments if kind is ToolCallPart else None
                if type(args) is not dict or part.parse_error is not None or part.freeform:
                    return None
                call_id, name = part.id, part.name
                call_names[call_id] = name
                function = {"index": len(calls), "name": wire(name, name), "arguments": args}
                calls.append({"function": function} if is_generated(call_id)
                             else {"id": call_id, "function": function})
            body: dict[str, Any] = {"role": "assistant", "content": "".join(texts)}
            if calls:
                body["tool_calls"] = calls
            append(body)
        else:  # user, system: texts alone
            if not parts:
                return None
            texts = []
            for part in parts:
                if type(part) is not TextPart:
                    return None
                texts.append(part.text)
            append({"role": role, "content": texts[0] if len(texts) == 1 else "".join(texts)})
    return out


def _body(request: Request, names: NameMap, notes: list[Note],
          messages: list[dict[str, Any]]) -> Encoded:
    """The body around ``messages``: the tools, streaming and the options."""
    send_tools = True
    if request.tool_choice is not None:
        send_tools = _choice_allows_tools(request.tool_choice, bool(request.tools), notes)
    body: dict[str, Any] = {"model": request.model, "messages": messages}
    if request.tools and send_tools:
        body["tools"] = [encode_tool(t, names, notes) for t in request.tools]
    body["stream"] = request.stream
    own = own_options(request.provider_options, WIRE, notes)
    base = own.pop("options", None)
    options: dict[str, Any] = dict(base) if base is not None and isinstance(base, Mapping) \
        else {}
    if request.temperature is not None:
        options["temperature"] = request.temperature
    if request.max_tokens is not None:
        options["num_predict"] = request.max_tokens
    if options:
        body["options"] = options
    elif base is not None:
        body["options"] = base
    return Encoded(body=with_extras(body, own), notes=tuple(notes))


# --------------------------------------------------------------------------- decode


# ------------------------------------------------------------------------ what the provider refuses
