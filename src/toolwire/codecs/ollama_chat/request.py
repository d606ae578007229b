"""Ollama native chat: canonical `Request` <-> ``/api/chat`` body, and what the server refuses.

Owns `encode` (a body with a note for every change made to fit: no tool choice, results
without an error flag, options), `decode_request` (messages back to canonical messages, tool
results matched to their calls by id, else by name and order; ``options`` split into
temperature, max tokens and the rest) and `check_body`. Fields the decoder reads must have the
API's shape; anything else raises `WireFormatError` naming the field. Keys it does not model go
to ``provider_options[WIRE]``. Pure: imports only the transcript, the error tree, the codec
base and this wire's ``parts`` and ``schema``; no HTTP, no vendor SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.codecs.base import (
    Encoded,
    NameMap,
    Note,
    call_id_for,
    own_options,
    role_problem,
)
from toolwire.codecs.base import wrong_shape as wrong
from toolwire.codecs.ollama_chat.parts import (
    MESSAGE_KEYS,
    WIRE,
    Seeder,
    decode_assistant,
    decode_images,
    encode_assistant,
    encode_media,
    is_generated,
    list_of,
    mapping,
    names_for,
    note_dropped,
    own,
    part_subject,
    text_of,
    unknown_keys,
    with_extras,
    wrap_own,
)
from toolwire.codecs.ollama_chat.schema import decode_tool, encode_tool
from toolwire.errors import WireFormatError
from toolwire.transcript import (
    MediaPart,
    Message,
    Part,
    Request,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
)

ERROR_PREFIX = "Error: "

EMPTY_RESULT = "(no output)"

_BODY_KEYS = frozenset({"model", "messages", "tools", "stream", "options"})


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


def _result_of(text: str) -> tuple[str, bool]:
    is_error = text.startswith(ERROR_PREFIX)
    if is_error:
        text = text[len(ERROR_PREFIX):]
    return ("" if text == EMPTY_RESULT else text), is_error


_WITH_IMAGES = MESSAGE_KEYS | {"images"}


def _decode_result(msg: Mapping[str, Any], calls: list[ToolCallPart], used: set[str],
                   position: int, where: str) -> ToolResultPart:
    given = msg.get("tool_call_id")
    if given is not None and not isinstance(given, str):
        raise wrong(f"{where}.tool_call_id", "a string", given)
    tool_name = msg.get("tool_name")
    if tool_name is not None and not isinstance(tool_name, str):
        raise wrong(f"{where}.tool_name", "a string", tool_name)
    match: ToolCallPart | None = None
    if given:
        match = next((c for c in calls if c.id == given), None)
    else:
        free = [c for c in calls if c.id not in used]
        match = next((c for c in free if tool_name is None or c.name == tool_name),
                     free[0] if free else None)
    content, is_error = _result_of(text_of(msg.get("content"), f"{where}.content"))
    if given:
        call_id = given
    elif match is not None:
        call_id = match.id
    else:
        call_id = call_id_for(f"result\x00{tool_name}\x00{content}", position)
    used.add(call_id)
    extras = unknown_keys(msg, _WITH_IMAGES)
    images = decode_images(msg.get("images"), where)
    return ToolResultPart(call_id=call_id, is_error=is_error,
                          content=((TextPart(text=content),) if content else ()) + tuple(images)
                          if images else content,
                          name=tool_name if tool_name is not None else
                          (match.name if match is not None else None),
                          provider_data=wrap_own(extras))


def _decode_messages(raw: list[Any], model: Any, offset: int) -> list[Message]:
    """``offset``: how many body messages came before ``raw`` (for the field names in errors)."""
    out: list[Message] = []
    calls: list[ToolCallPart] = []
    used: set[str] = set()
    results: list[ToolResultPart] = []
    names = NameMap()
    for index, item in enumerate(raw):
        where = f"messages[{index + offset}]"
        msg = mapping(item, where)
        role = text_of(msg.get("role"), f"{where}.role").lower()
        if role == "tool":
            results.append(_decode_result(msg, calls, used, index, where))
            continue
        if results:
            out.append(Message(role="tool", parts=tuple(results)))
            results = []
        if role == "assistant":
            decoded = decode_assistant(msg, Seeder(model, index), names, where)
            calls, used = list(decoded.tool_calls), set()
            out.append(decoded)
        elif role in ("user", "system"):
            content = text_of(msg.get("content"), f"{where}.content")
            parts: tuple[Part, ...] = (TextPart(text=content),) if content else ()
            parts += tuple(decode_images(msg.get("images"), where))
            out.append(Message(role="user" if role == "user" else "system", parts=parts,
                               provider_data=wrap_own(unknown_keys(msg, _WITH_IMAGES))))
        else:
            raise WireFormatError(f"{where}.role: expected user, assistant, system or tool, "
                                  f"got {role!r}")
    if results:
        out.append(Message(role="tool", parts=tuple(results)))
    return out


def decode_request(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
) -> Request:
    """Read an ``/api/chat`` body back; keys this codec does not model go to provider_options.

    ``model`` and ``stream`` are what a URL said: ``model`` is used when the body names none,
    ``stream`` when the body has no ``stream`` key (the server's default is to stream).
    """
    body = mapping(body, "request body")
    given = body.get("model")
    name = text_of(model if given is None and model is not None else given, "model")
    raw_messages = list_of(body.get("messages"), "messages", "messages")
    system: str | None = None
    first = raw_messages[0] if raw_messages else None
    offset = 0
    if isinstance(first, Mapping) and str(first.get("role", "")).lower() == "system" \
            and not unknown_keys(first, MESSAGE_KEYS):
        system = text_of(first.get("content"), "messages[0].content")
        raw_messages = raw_messages[1:]
        offset = 1
    extra = unknown_keys(body, _BODY_KEYS)
    temperature: float | None = None
    max_tokens: int | None = None
    options = body.get("options")
    if isinstance(options, Mapping):
        rest = dict(options)
        if isinstance(rest.get("temperature"), int | float) \
                and not isinstance(rest["temperature"], bool):
            temperature = rest.pop("temperature")
        num_predict = rest.get("num_predict")
        if isinstance(num_predict, int) and not isinstance(num_predict, bool) and num_predict > 0:
            max_tokens = rest.pop("num_predict")
        if rest or (temperature is None and max_tokens is None):
            extra["options"] = rest
    elif options is not None:
        raise wrong("options", "an object", options)
    streams = body.get("stream")
    if streams is None:
        streams = stream
    elif not isinstance(streams, bool):
        raise wrong("stream", "true or false", streams)
    tools = list_of(body.get("tools"), "tools", "tools")
    return Request(
        model=name,
        messages=tuple(_decode_messages(raw_messages, name, offset)),
        system=system,
        tools=tuple(decode_tool(t, f"tools[{i}]") for i, t in enumerate(tools)),
        max_tokens=max_tokens,
        temperature=temperature,
        stream=streams is not False,
        provider_options=wrap_own(extra),
    )


# ------------------------------------------------------------------------ what the provider refuses


def check_body(body: dict[str, Any]) -> str | None:
    """The first rule the raw ``body`` breaks, worded as the provider words it, or None."""
    problem = role_problem(body.get("messages"), ("system", "user", "assistant", "tool"))
    if problem:
        return problem
    for i, m in enumerate(body["messages"]):
        for call in m.get("tool_calls") or ():
            if not isinstance(call.get("function", {}).get("arguments", {}), dict):
                return (f"messages.{i}: json: cannot unmarshal string into Go struct field "
                        "ToolCallFunction.messages.tool_calls.function.arguments")
    return None
