"""Ollama native chat: an ``/api/chat`` body a client sent, read back into a canonical
`Request` (`decode_request`: tool results matched to their calls by id, else by name and
order; ``options`` split into temperature, max tokens and the rest), and the first rule a raw
body breaks (`check_body`).

Fields the decoder reads must have the API's shape; anything else raises `WireFormatError`
naming the field. Keys it does not model go to ``provider_options[WIRE]``. Pure: imports the
transcript, the shared codec modules and this wire's ``parts``, ``schema`` and ``request``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.codecs.base import (
    NameMap,
    call_id_for,
    role_problem,
)
from toolwire.codecs.base import wrong_shape as wrong
from toolwire.codecs.ollama_chat.parts import (
    MESSAGE_KEYS,
    Seeder,
    decode_assistant,
    decode_images,
    list_of,
    mapping,
    text_of,
    unknown_keys,
    wrap_own,
)
from toolwire.codecs.ollama_chat.request import BODY_KEYS, EMPTY_RESULT, ERROR_PREFIX
from toolwire.codecs.ollama_chat.schema import decode_tool
from toolwire.errors import WireFormatError
from toolwire.transcript import (
    Message,
    Part,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)


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
    extra = unknown_keys(body, BODY_KEYS)
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
