"""gemini-generate request bodies, both ways, and what the provider refuses in one.

Owns: `encode` (a `Request` -> a ``generateContent`` body with notes), `decode_request` (a body
-> a `Request`), the codec settings under ``provider_options["gemini-generate"]``, the tool
choice (``toolConfig``), the merge of provider options into the body, and `check_body`. Parts
are `parts`'s, tool declarations `schema`'s. Must not import ``reply``, ``stream``, transport,
client or any vendor SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.codecs.base import Encoded, NameMap, Note, own_options, role_problem
from toolwire.codecs.base import wrong_shape as wrong
from toolwire.codecs.gemini_generate import media_problem
from toolwire.codecs.gemini_generate import takes_result_parts as model_takes_result_parts
from toolwire.codecs.gemini_generate.parts import (
    LIMITS,
    WIRE,
    PartEncoder,
    as_object,
    decode_parts,
)
from toolwire.codecs.gemini_generate.schema import SCHEMA_FIELDS, decode_tools, encode_declaration
from toolwire.codecs.google_shared import as_list, name_map, wire_name
from toolwire.codecs.media import check_limits, restore_moved
from toolwire.codecs.model_checks import gemini_model_problem
from toolwire.errors import ConfigError
from toolwire.transcript import JSON, Message, Part, Request, ToolChoice, ToolResultPart


def takes_result_parts(model: str, setting: Any = None) -> bool:
    """Whether ``model`` takes media inside a function response: ``setting`` when it is a
    bool, else the table (`toolwire.codecs.gemini_generate.RESULT_PARTS_MODELS`)."""
    if isinstance(setting, bool):
        return setting
    if setting is not None:
        raise ConfigError(f"{WIRE} _result_parts must be true or false, not {setting!r}")
    return model_takes_result_parts(model)


_MODES = {"auto": "AUTO", "required": "ANY", "tool": "ANY", "none": "NONE"}
_READ = ("contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "model")


# --------------------------------------------------------------------------- encode


def encode(request: Request) -> Encoded:
    """The ``generateContent`` body for a request, with a note for every change made."""
    check_limits(request, WIRE, LIMITS)
    notes: list[Note] = []
    options = own_options(request.provider_options, WIRE, notes)
    settings = {k: options.pop(k) for k in list(options) if k.startswith("_")}
    schema_field = settings.pop("_schema_field", "parametersJsonSchema")
    if schema_field not in SCHEMA_FIELDS:
        raise ConfigError(f"gemini-generate _schema_field must be one of {SCHEMA_FIELDS}, "
                          f"not {schema_field!r}")
    fill = settings.pop("_fill_signature", None)
    declared = settings.pop("_declarations", None)
    result_parts = takes_result_parts(request.model, settings.pop("_result_parts", None))
    settings.pop("_rules", None)  # the per-model rules' setting (`toolwire.codecs.model_rules`)
    for key in settings:
        notes.append(Note(kind="field_dropped", subject=key,
                          detail="not a gemini-generate setting; ignored"))
    names = name_map(request.tools)
    notes.extend(names.notes())
    tool_names = [t.name for t in request.tools]
    body: dict[str, Any] = {}
    if request.system:
        body["systemInstruction"] = {"parts": [{"text": request.system}]}
    encoder = PartEncoder(names, tool_names, notes=notes,
                          fill_signature=str(fill) if fill else None, result_parts=result_parts)
    body["contents"] = _contents(request.messages, encoder)
    if request.tools:
        extras = declared if declared is not None and isinstance(declared, Mapping) else {}
        body["tools"] = [{"functionDeclarations": [
            encode_declaration(t, names, schema_field, extras, notes) for t in request.tools
        ]}]
    if request.tool_choice is not None:
        body["toolConfig"] = {"functionCallingConfig": _choice(request.tool_choice, names,
                                                               tool_names, notes)}
    generation: dict[str, Any] = {}
    if request.temperature is not None:
        generation["temperature"] = request.temperature
    if request.max_tokens is not None:
        generation["maxOutputTokens"] = request.max_tokens
    if generation:
        body["generationConfig"] = generation
    _merge(body, options)
    return Encoded(body=body, notes=tuple(notes))


def _contents(messages: tuple[Message, ...], encoder: PartEncoder) -> list[dict[str, Any]]:
    contents: list[dict[str, Any]] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        role = "model" if message.role == "assistant" else "user"
        if message.role == "system":
            encoder.notes.append(Note(
                kind="role_changed", subject=f"messages[{i}]",
                detail="Gemini contents have no system role; sent as a user turn"))
        parts = encoder.content(message.parts, i, model=role == "model")
        if message.role == "tool":
            parts.extend(encoder.moved_media(message.parts, i))
        had_parts = bool(message.parts)
        first = i
        if message.role == "tool" and i + 1 < len(messages) and messages[i + 1].role == "user":
            i += 1
            parts.extend(encoder.content(messages[i].parts, i, model=False))
            had_parts = had_parts or bool(messages[i].parts)
        if had_parts and not parts:
            encoder.notes.append(Note(kind="message_dropped", subject=f"messages[{first}]",
                                      detail="nothing in it can be sent to Gemini"))
        else:
            contents.append({"role": role, "parts": parts})
        i += 1
    return contents


def _choice(
    choice: ToolChoice, names: NameMap, tool_names: list[str], notes: list[Note]
) -> dict[str, Any]:
    config: dict[str, Any] = {"mode": _MODES[choice.mode]}
    if choice.mode == "tool" and choice.name:
        config["allowedFunctionNames"] = [wire_name(names, choice.name, tool_names)]
    if choice.parallel is not None:
        notes.append(Note(kind="choice_changed", subject="tool_choice",
                          detail="Gemini cannot limit parallel calls; 'parallel' not sent"))
    return config


def _deep_merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """A new object: ``base`` with ``extra`` merged in key by key (values shared, not copied)."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _merge(body: dict[str, Any], options: Mapping[str, Any]) -> None:
    for key, value in options.items():
        if key == "tools" and isinstance(value, list) and isinstance(body.get("tools"), list):
            body["tools"] = [*body["tools"], *value]
        elif isinstance(value, Mapping) and isinstance(body.get(key), Mapping):
            body[key] = _deep_merge(body[key], value)
        else:
            body[key] = value


# --------------------------------------------------------------------------- decode


def check_parts(parts: Any, where: str) -> list[Any]:
    """A content's parts, each checked for the fields the codec reads (a wrong-shaped one is
    a `WireFormatError` naming the field)."""
    checked = as_list(parts, f"{where}.parts", "a list of parts")
    for j, part in enumerate(checked):
        at = f"{where}.parts[{j}]"
        if not isinstance(part, (dict, Mapping)):
            raise wrong(at, "an object (a part)", part)
        text = part.get("text")
        if text is not None and not isinstance(text, str):
            raise wrong(f"{at}.text", "a string", text)
        if "functionCall" in part:
            call = part["functionCall"]
            if not isinstance(call, (dict, Mapping)):
                raise wrong(f"{at}.functionCall", "an object", call)
            if not isinstance(call.get("name"), str):
                raise wrong(f"{at}.functionCall.name", "a string", call.get("name"))
            args = call.get("args")
            if args is not None and not isinstance(args, Mapping | str):
                raise wrong(f"{at}.functionCall.args", "an object", args)
        if "functionResponse" in part:
            response = part["functionResponse"]
            if not isinstance(response, (dict, Mapping)):
                raise wrong(f"{at}.functionResponse", "an object", response)
            if not isinstance(response.get("name"), str | None):
                raise wrong(f"{at}.functionResponse.name", "a string", response.get("name"))
    return checked


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
    options.update({k: v for k, v in data.items() if k not in _READ})
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


# ----------------------------------------------------------------- what the provider refuses


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
