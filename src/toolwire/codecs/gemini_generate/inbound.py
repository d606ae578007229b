"""gemini-generate: a ``generateContent`` body a client sent, read back into a canonical
`Request` (`decode_request`: camelCase and snake_case alike, function responses kept as they
came), and the first rule a raw body breaks (`check_body`).

Pure: imports the transcript, the shared codec modules and this wire's ``parts``, ``schema``
and ``request``; never the wire's reply or stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.codecs.base import NameMap, role_problem
from toolwire.codecs.base import wrong_shape as wrong
from toolwire.codecs.gemini_generate import media_problem
from toolwire.codecs.gemini_generate.parts import (
    WIRE,
    as_object,
    decode_parts,
)
from toolwire.codecs.gemini_generate.request import READ, check_parts, takes_result_parts
from toolwire.codecs.gemini_generate.schema import decode_tools
from toolwire.codecs.google_shared import as_list
from toolwire.codecs.media import restore_moved
from toolwire.codecs.model_checks import gemini_model_problem
from toolwire.transcript import JSON, Message, Part, Request, ToolChoice, ToolResultPart

_AS_SENT = frozenset({"args", "response", "parameters", "parametersJsonSchema",
                      "responseJsonSchema", "responseSchema", "data", "text"})
"""Fields whose values are the caller's own (arguments, schemas, results, bytes, text)."""

def camel_case(value: Any) -> Any:
    """``value`` with the API's field names in camelCase: the API takes snake_case too
    (``function_call``, ``parameters_json_schema``: what litellm and raw dicts send), and
    reads both the same. The values of `_AS_SENT` fields are kept as they are."""
    if isinstance(value, list):
        return [camel_case(v) for v in value]
    if not isinstance(value, Mapping):
        return value
    out: dict[str, Any] = {}
    for key, inner in value.items():
        head, *rest = str(key).split("_")
        name = head + "".join(w[:1].upper() + w[1:] for w in rest) if rest else key
        name = name if name not in out else key
        out[name] = inner if name in _AS_SENT else camel_case(inner)
    return out

def decode_request(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
) -> Request:
    """Read a ``generateContent`` body back as a `Request`.

    ``model`` and ``stream`` are what the URL said (``models/{model}:streamGenerateContent``);
    the body cannot say whether it streams, so no ``stream`` means it does not. A ``model``
    key in the body is read only when no ``model`` is given. Whatever is not read goes to
    ``provider_options["gemini-generate"]``.
    """
    if not isinstance(body, Mapping):
        raise wrong("request body", "an object", body)
    data = dict(body)
    for snake, camel in (("system_instruction", "systemInstruction"),
                         ("tool_config", "toolConfig"), ("generation_config", "generationConfig")):
        if snake in data and camel not in data:
            data[camel] = data.pop(snake)
    for key in ("contents", "systemInstruction", "tools", "toolConfig", "generationConfig"):
        if key in data:
            data[key] = camel_case(data[key])
    options: dict[str, Any] = {}
    tools = decode_tools(as_list(data.get("tools"), "tools", "a list of tools"), options)
    choice = _decode_choice(as_object(data.get("toolConfig"), "toolConfig"), options)
    generation = dict(as_object(data.get("generationConfig"), "generationConfig") or {})
    temperature = generation.pop("temperature", None)
    max_tokens = generation.pop("maxOutputTokens", None)
    if temperature is not None and (isinstance(temperature, bool)
                                    or not isinstance(temperature, int | float)):
        generation["temperature"], temperature = temperature, None
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)):
        generation["maxOutputTokens"], max_tokens = max_tokens, None
    if generation:
        options["generationConfig"] = generation
    options.update({k: v for k, v in data.items() if k not in READ})
    if model is None:
        raw_model = data.get("model")
        if raw_model is not None and not isinstance(raw_model, str):
            raise wrong("model", "a string", raw_model)
        model = raw_model.removeprefix("models/") if raw_model else ""
    contents = as_list(data.get("contents"), "contents", "a list of contents")
    messages, inside = _decode_contents(contents)
    if model and inside is not None and inside != takes_result_parts(model):
        options["_result_parts"] = inside  # how this body sent result media, for this model
    return Request(
        model=model,
        messages=tuple(messages),
        system=_system_text(data.get("systemInstruction")),
        tools=tuple(tools),
        tool_choice=choice,
        max_tokens=max_tokens,
        temperature=temperature,
        stream=bool(stream),
        provider_options={WIRE: options} if options else None,
    )

def _system_text(value: JSON) -> str | None:
    if isinstance(value, str):
        return value or None
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise wrong("systemInstruction", "an object (a content) or a string", value)
    parts = check_parts(value.get("parts"), "systemInstruction")
    texts = [p["text"] for p in parts if isinstance(p.get("text"), str)]
    return "\n".join(texts) or None

def _decode_contents(contents: list[Any]) -> tuple[list[Message], bool | None]:
    """The messages, and where result media went: inside the function responses (True),
    after them (False), or nowhere (None)."""
    messages: list[Message] = []
    inside: bool | None = None
    previous: tuple[Any, ...] = ()
    names = NameMap()
    for i, content in enumerate(contents):
        where = f"contents[{i}]"
        if not isinstance(content, (dict, Mapping)):
            raise wrong(where, "an object (a content)", content)
        role = content.get("role")
        if role is not None and role not in ("user", "model", "function"):
            raise wrong(f"{where}.role", "'user', 'model' or 'function'", role)
        parts = decode_parts(check_parts(content.get("parts"), where), names=names,
                             seed=where, previous_calls=previous, media=role != "model")
        if role == "model":
            message = Message(role="assistant", parts=tuple(parts))
            messages.append(message)
            previous = message.tool_calls
            continue
        results = [p for p in parts if isinstance(p, ToolResultPart)]
        rest: list[Part] = [p for p in parts if not isinstance(p, ToolResultPart)]
        if results:
            if any(r.media for r in results):
                inside = True
            before = len(rest)
            rest = restore_moved(results, rest)
            if len(rest) < before:
                inside = False
        if results:
            messages.append(Message(role="tool", parts=tuple(results)))
        if rest or not results:
            messages.append(Message(role="user", parts=tuple(rest)))
        previous = ()
    return messages, inside

def _decode_choice(config: JSON, options: dict[str, Any]) -> ToolChoice | None:
    if not isinstance(config, Mapping):
        return None
    rest = dict(config)
    calling = rest.pop("functionCallingConfig", None)
    choice: ToolChoice | None = None
    if isinstance(calling, Mapping):
        left = dict(calling)
        mode = left.pop("mode", None)
        allowed = left.pop("allowedFunctionNames", None)
        if mode == "AUTO":
            choice = ToolChoice(mode="auto")
        elif mode == "NONE":
            choice = ToolChoice(mode="none")
        elif mode == "ANY" and isinstance(allowed, list) and len(allowed) == 1:
            choice, allowed = ToolChoice(mode="tool", name=str(allowed[0])), None
        elif mode == "ANY":
            choice = ToolChoice(mode="required")
        elif mode == "VALIDATED":
            choice, left["mode"] = ToolChoice(mode="auto"), mode
        elif mode is not None:
            left["mode"] = mode
        if allowed is not None:
            left["allowedFunctionNames"] = allowed
        if left:
            rest["functionCallingConfig"] = left
    elif calling is not None:
        raise wrong("toolConfig.functionCallingConfig", "an object", calling)
    if rest:
        options["toolConfig"] = rest
    return choice

def check_body(body: dict[str, Any]) -> str | None:
    """The first rule the raw ``body`` breaks, worded as the provider words it, or None (a
    ``model`` key, the URL's model, decides whether function responses may hold parts)."""
    contents = body.get("contents")
    problem = role_problem(contents, ("user", "model", "function"), "contents")
    if problem or not isinstance(contents, list):
        return problem
    for i, content in enumerate(contents):
        calls = sum(1 for p in content.get("parts", ()) if "functionCall" in p)
        if not calls:
            continue
        following = contents[i + 1] if i + 1 < len(contents) else None
        if following is None:
            continue
        answers = sum(1 for p in following.get("parts", ()) if "functionResponse" in p)
        if answers != calls:
            return ("Please ensure that the number of function response parts is equal to the "
                    f"number of function call parts of the function call turn (contents.{i} "
                    f"has {calls} call(s), contents.{i + 1} has {answers} response(s)).")
    return media_problem(body) or gemini_model_problem(body)
