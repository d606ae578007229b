"""Ollama native chat: a canonical `Request` as an ``/api/chat`` body.

Owns `encode` (a body with a note for every change made to fit: no tool choice, results
without an error flag, options); reading a body back and checking a raw one are `inbound`'s.
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
