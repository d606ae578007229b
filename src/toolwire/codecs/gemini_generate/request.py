"""gemini-generate: a canonical `Request` as a ``generateContent`` body.

Owns `encode` (a `Request` -> a body with notes), the codec settings under
``provider_options["gemini-generate"]``, the tool choice (``toolConfig``) and the merge of
provider options into the body; reading a body back and checking a raw one are `inbound`'s. Parts
are `parts`'s, tool declarations `schema`'s. Must not import ``reply``, ``stream``, transport,
client or any vendor SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.codecs.base import Encoded, NameMap, Note, own_options
from toolwire.codecs.base import wrong_shape as wrong
from toolwire.codecs.gemini_generate import takes_result_parts as model_takes_result_parts
from toolwire.codecs.gemini_generate.parts import (
    LIMITS,
    WIRE,
    PartEncoder,
)
from toolwire.codecs.gemini_generate.schema import SCHEMA_FIELDS, encode_declaration
from toolwire.codecs.google_shared import as_list, name_map, wire_name
from toolwire.codecs.media import check_limits
from toolwire.errors import ConfigError
from toolwire.transcript import Message, Request, ToolChoice


def takes_result_parts(model: str, setting: Any = None) -> bool:
    """Whether ``model`` takes media inside a function response: ``setting`` when it is a
    bool, else the table (`toolwire.codecs.gemini_generate.RESULT_PARTS_MODELS`)."""
    if isinstance(setting, bool):
        return setting
    if setting is not None:
        raise ConfigError(f"{WIRE} _result_parts must be true or false, not {setting!r}")
    return model_takes_result_parts(model)


_MODES = {"auto": "AUTO", "required": "ANY", "tool": "ANY", "none": "NONE"}
READ = ("contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "model")


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


# ----------------------------------------------------------------- what the provider refuses
