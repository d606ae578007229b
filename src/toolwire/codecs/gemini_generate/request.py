"""gemini-generate: a canonical `Request` as a ``generateContent`` body.

Owns `encode` (a `Request` -> a body with notes), `encode_usual` (the same body written in
one pass for a request of the usual messages only), the codec settings under
``provider_options["gemini-generate"]``, the tool choice (``toolConfig``) and the merge of
provider options into the body; reading a body back and checking a raw one are `inbound`'s. Parts
are `parts`'s, tool declarations `schema`'s. Must not import ``reply``, ``stream``, transport,
client or any vendor SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

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
from toolwire.transcript import (
    Message,
    Request,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
)


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
    settings = _settings(request, notes)
    names = name_map(request.tools)
    notes.extend(names.notes())
    tool_names = [t.name for t in request.tools]
    fill = settings.fill
    encoder = PartEncoder(names, tool_names, notes=notes,
                          fill_signature=str(fill) if fill else None,
                          result_parts=takes_result_parts(request.model, settings.result_parts))
    return _body(request, _contents(request.messages, encoder), names, tool_names, settings,
                 notes)


def encode_usual(request: Request) -> Encoded | None:
    """`encode` of a request holding only the usual messages (texts, calls with object
    arguments, named text results, no system message), its contents written in one pass;
    None for any other request, which `encode` takes."""
    names = name_map(request.tools)
    tool_names = [t.name for t in request.tools]
    written = _usual_contents(request.messages, names, tool_names)
    if written is None:
        return None
    contents, firsts = written
    notes: list[Note] = []
    settings = _settings(request, notes)
    notes.extend(names.notes())
    if settings.fill:
        for first in firsts:  # the first call of each model turn (none carries a signature)
            first["thoughtSignature"] = str(settings.fill)
    return _body(request, contents, names, tool_names, settings, notes)


class _Settings(NamedTuple):
    """The codec settings of a request (`provider_options`' keys that start with ``_``) and
    the rest of its options, for the body."""

    options: dict[str, Any]
    schema_field: Any
    fill: Any
    declared: Any
    result_parts: bool | None
    """The ``_result_parts`` setting; None: the model's row of the table decides."""


def _settings(request: Request, notes: list[Note]) -> _Settings:
    options = own_options(request.provider_options, WIRE, notes)
    settings = {k: options.pop(k) for k in list(options) if k.startswith("_")}
    schema_field = settings.pop("_schema_field", "parametersJsonSchema")
    if schema_field not in SCHEMA_FIELDS:
        raise ConfigError(f"gemini-generate _schema_field must be one of {SCHEMA_FIELDS}, "
                          f"not {schema_field!r}")
    fill = settings.pop("_fill_signature", None)
    declared = settings.pop("_declarations", None)
    result_parts = settings.pop("_result_parts", None)
    if result_parts is not None:  # a bool, else refused
        result_parts = takes_result_parts(request.model, result_parts)
    settings.pop("_rules", None)  # the per-model rules' setting (`toolwire.codecs.model_rules`)
    for key in settings:
        notes.append(Note(kind="field_dropped", subject=key,
                          detail="not a gemini-generate setting; ignored"))
    return _Settings(options, schema_field, fill, declared, result_parts)


def _body(request: Request, contents: list[dict[str, Any]], names: NameMap,
          tool_names: list[str], settings: _Settings, notes: list[Note]) -> Encoded:
    """The body around ``contents``: the system instruction, the tools, the tool choice,
    the generation settings and the options."""
    body: dict[str, Any] = {}
    if request.system:
        body["systemInstruction"] = {"parts": [{"text": request.system}]}
    body["contents"] = contents
    if request.tools:
        declared = settings.declared
        extras = declared if declared is not None and isinstance(declared, Mapping) else {}
        body["tools"] = [{"functionDeclarations": [
            encode_declaration(t, names, settings.schema_field, extras, notes)
            for t in request.tools
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
    _merge(body, settings.options)
    return Encoded(body=body, notes=tuple(notes))


def _usual_contents(messages: tuple[Message, ...], names: NameMap, tool_names: list[str]
                    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """The contents `_contents` writes for messages of the usual parts only, and the first
    call of each model turn (for ``_fill_signature``); None for any other messages."""
    contents: list[dict[str, Any]] = []
    firsts: list[dict[str, Any]] = []
    sent: dict[str, str] = {}  # a tool's name as sent, by its own
    call_names: dict[str, str] = {}
    after_tool: list[dict[str, Any]] | None = None  # a user turn joins the results before it
    part: Any  # told apart by its exact type, the cheapest test
    for message in messages:
        role = message.role
        if message.tools or role == "system":
            return None
        if role == "user" and after_tool is not None:
            parts, after_tool = after_tool, None
        else:
            parts = []
            contents.append({"role": "model" if role == "assistant" else "user", "parts": parts})
            after_tool = parts if role == "tool" else None
        first = role != "assistant"  # whether the turn's first call was seen (or not wanted)
        for part in message.parts:
            kind = type(part)
            if kind is TextPart:
                if part.provider_data is not None:
                    return None
                parts.append({"text": part.text})
                continue
            if kind is ToolCallPart:
                args = part.arguments
                if type(args) is not dict or part.provider_data is not None or part.freeform:
                    return None
                call_id, name = part.id, part.name
                call_names[call_id] = name
            elif kind is ToolResultPart:
                content = part.content
                if type(content) is not str or part.provider_data is not None:
                    return None
                call_id = part.call_id
                name = part.name or call_names.get(call_id)
                if not name:
                    return None
            else:
                return None
            wire = sent.get(name)
            if wire is None:
                wire = sent[name] = wire_name(names, name, tool_names)
            if kind is ToolCallPart:
                call = {"functionCall": {"name": wire, "args": args, "id": call_id}}
                parts.append(call)
                if not first:
                    first = True
                    firsts.append(call)
            else:
                parts.append({"functionResponse": {"name": wire, "id": call_id, "response": {
                    "error" if part.is_error else "output": content}}})
    return contents, firsts


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
