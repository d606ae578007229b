"""The Gemini ``generateContent`` wire (``gemini-generate``): canonical values <-> REST JSON.

Owns the request side (`encode`, `encode_request`, `decode_request`) and re-exports the reply
side from ``_gemini_reply`` (`decode_response`, `encode_response`, `encode_stream`,
`stream_decoder`, `decode_stream`, `decode_error`). Pure functions over camelCase JSON: must not
import transport, client or any vendor SDK.

How canonical values land on this wire:

- ``Request.system`` -> ``systemInstruction``; messages -> ``contents`` with roles ``user`` and
  ``model``. A mid-conversation system message is sent as a user turn (with a note).
- A tool message -> ONE user content holding one ``functionResponse`` per result, in order,
  ``response: {"output": ...}`` or ``{"error": ...}``; a user message right after it joins that
  same content (`decode_request` splits them again). ``role: "function"`` is read as user.
- Calls carry ``args`` as an object. Gemini often sends no call id: `call_id_for` makes one
  up, and ``provider_data`` remembers it (``"_generated_id": true``) so it is never sent back.
- ``thoughtSignature`` stays on the exact part it came on and is echoed verbatim; none is
  ever invented (but see ``_fill_signature``). ``thought: true`` parts are `ReasoningPart`.
- Model id and streaming live in the URL (``models/{model}:generateContent`` or
  ``:streamGenerateContent?alt=sse``), not in the body: `decode_request` takes them as keywords.

Codec settings ride in ``Request.provider_options["gemini-generate"]`` under keys that start
with ``_``. The encoder reads them and never puts them in the body:

- ``"_schema_field"``: ``"parametersJsonSchema"`` (default) sends each tool's JSON Schema
  unchanged; ``"parameters"`` sends Gemini's OpenAPI subset instead, rewritten on a copy
  (upper-case types, type lists -> ``nullable`` / ``anyOf``, ``const`` -> ``enum``, string enum
  values, inclusive bounds, unsupported keywords such as ``$schema`` and
  ``additionalProperties`` dropped, local ``$ref`` inlined), one ``schema_rewritten`` note per
  tool listing each change.
- ``"_fill_signature"``: a value (``"skip_thought_signature_validator"`` is the one Gemini
  documents) put on the first call of any model turn whose calls carry no signature, for
  history Gemini did not produce (calls from another provider or made up by hand).
- ``"_declarations"``: ``{wire tool name: {extra FunctionDeclaration fields}}`` (``behavior``,
  ``response``, ...), filled by `decode_request` so that nothing is lost.

Every other key is merged into the body: objects key by key (``generationConfig``,
``toolConfig``), ``tools`` entries appended (``googleSearch``, ``codeExecution``, ...), anything
else set as given (values are shared, not copied: bodies are serialised, never changed).
`decode_request` puts every part of a body it does not read there. Options for other wires
are not sent; each of their keys gets a ``field_dropped`` note. A body of the wrong shape
raises `WireFormatError` naming the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from toolwire.codecs.base import Encoded, NameMap, Note, drive_stream, own_options, role_problem
from toolwire.codecs.base import wrong_shape as wrong
from toolwire.codecs.gemini_generate.parts import (
    WIRE,
    PartEncoder,
    as_list,
    as_object,
    check_parts,
    decode_parts,
    name_map,
    wire_name,
)
from toolwire.codecs.gemini_generate.reply import (
    BLOCK_REASONS,
    FINISH_REASONS,
    StreamDecoder,
    decode_error,
    decode_response,
    encode_response,
    encode_stream,
)
from toolwire.codecs.gemini_generate.schema import from_openapi, to_openapi
from toolwire.errors import ConfigError
from toolwire.events import StreamEvent
from toolwire.transcript import (
    JSON,
    Message,
    Request,
    StopReason,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
)

STOP_REASONS: dict[str, StopReason] = {
    **{k: v for k, v in BLOCK_REASONS.items() if k not in FINISH_REASONS},
    **FINISH_REASONS,
}
"""Every ``finishReason`` and ``promptFeedback.blockReason`` value -> normalised stop.

A blocked prompt (no candidates) reads its block reason with ``BLOCK_REASONS`` instead, where
``OTHER`` is a refusal rather than ``other``.
"""

_SCHEMA_FIELDS = ("parametersJsonSchema", "parameters")
_MODES = {"auto": "AUTO", "required": "ANY", "tool": "ANY", "none": "NONE"}
_DECLARED = ("name", "description", "parameters", "parametersJsonSchema")
_READ = ("contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "model")


# --------------------------------------------------------------------------- encode


def encode(request: Request) -> Encoded:
    """The ``generateContent`` body for a request, with a note for every change made."""
    notes: list[Note] = []
    options = own_options(request.provider_options, WIRE, notes)
    settings = {k: options.pop(k) for k in list(options) if k.startswith("_")}
    schema_field = settings.pop("_schema_field", "parametersJsonSchema")
    if schema_field not in _SCHEMA_FIELDS:
        raise ConfigError(f"gemini-generate _schema_field must be one of {_SCHEMA_FIELDS}, "
                          f"not {schema_field!r}")
    fill = settings.pop("_fill_signature", None)
    declared = settings.pop("_declarations", None)
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
                          fill_signature=str(fill) if fill else None)
    body["contents"] = _contents(request.messages, encoder)
    if request.tools:
        extras = declared if isinstance(declared, Mapping) else {}
        body["tools"] = [{"functionDeclarations": [
            _declaration(t, names, schema_field, extras, notes) for t in request.tools
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


def encode_request(request: Request) -> dict[str, Any]:
    """`encode` without the notes."""
    return encode(request).body


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


def _declaration(
    tool: ToolSpec, names: NameMap, schema_field: str, declared: Mapping[str, JSON],
    notes: list[Note],
) -> dict[str, Any]:
    name = names.wire(tool.name)
    out: dict[str, Any] = {"name": name}
    if tool.description:
        out["description"] = tool.description
    if schema_field == "parameters":
        params, changes = to_openapi(tool.input_schema)
        if params is not None:
            out["parameters"] = params
        if changes:
            notes.append(Note(kind="schema_rewritten", subject=tool.name,
                              detail="; ".join(changes)))
    else:
        schema = tool.input_schema
        out["parametersJsonSchema"] = schema if isinstance(schema, dict) else dict(schema)
    if tool.strict:
        notes.append(Note(kind="field_dropped", subject=tool.name,
                          detail="Gemini has no per-tool strict mode; strict not sent"))
    extra = declared.get(name) if declared else None
    if extra is not None and isinstance(extra, Mapping):
        out.update((k, v) for k, v in extra.items() if k not in out)
    return out


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


def decode_request(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool = False
) -> Request:
    """Read a ``generateContent`` body back as a `Request`.

    ``model`` and ``stream`` come from the URL (a ``model`` key in the body is read too, as a
    fallback). Whatever is not read goes to ``provider_options["gemini-generate"]``.
    """
    if not isinstance(body, Mapping):
        raise wrong("request body", "an object", body)
    data = dict(body)
    for snake, camel in (("system_instruction", "systemInstruction"),
                         ("tool_config", "toolConfig"), ("generation_config", "generationConfig")):
        if snake in data and camel not in data:
            data[camel] = data.pop(snake)
    options: dict[str, Any] = {}
    tools = _decode_tools(as_list(data.get("tools"), "tools", "a list of tools"), options)
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
    return Request(
        model=model,
        messages=tuple(_decode_contents(contents)),
        system=_system_text(data.get("systemInstruction")),
        tools=tuple(tools),
        tool_choice=choice,
        max_tokens=max_tokens,
        temperature=temperature,
        stream=stream,
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


def _decode_contents(contents: list[Any]) -> list[Message]:
    messages: list[Message] = []
    previous: tuple[Any, ...] = ()
    names = NameMap()
    for i, content in enumerate(contents):
        where = f"contents[{i}]"
        if not isinstance(content, (dict, Mapping)):
            raise wrong(where, "an object (a content)", content)
        role = content.get("role")
        if role is not None and not isinstance(role, str):
            raise wrong(f"{where}.role", "a string", role)
        parts = decode_parts(check_parts(content.get("parts"), where), names=names,
                             seed=where, previous_calls=previous)
        if role == "model":
            message = Message(role="assistant", parts=tuple(parts))
            messages.append(message)
            previous = message.tool_calls
            continue
        results = [p for p in parts if isinstance(p, ToolResultPart)]
        rest = [p for p in parts if not isinstance(p, ToolResultPart)]
        if results:
            messages.append(Message(role="tool", parts=tuple(results)))
        if rest or not results:
            messages.append(Message(role="user", parts=tuple(rest)))
        previous = ()
    return messages


def _decode_tools(tools: list[Any], options: dict[str, Any]) -> list[ToolSpec]:
    specs: list[ToolSpec] = []
    other: list[Any] = []
    declared: dict[str, Any] = {}
    for i, entry in enumerate(tools):
        if not isinstance(entry, Mapping):
            raise wrong(f"tools[{i}]", "an object (a tool)", entry)
        key = "function_declarations" if "function_declarations" in entry and \
            "functionDeclarations" not in entry else "functionDeclarations"
        declarations = as_list(entry.get(key), f"tools[{i}].{key}", "a list of declarations")
        rest = {k: v for k, v in entry.items()
                if k not in ("functionDeclarations", "function_declarations")}
        if rest:
            other.append(rest)
        for j, decl in enumerate(declarations):
            specs.append(_decode_declaration(decl, f"tools[{i}].{key}[{j}]", declared, options))
    if other:
        options["tools"] = other
    if declared:
        options["_declarations"] = declared
    return specs


def _decode_declaration(
    decl: Any, where: str, declared: dict[str, Any], options: dict[str, Any]
) -> ToolSpec:
    if not isinstance(decl, Mapping):
        raise wrong(where, "an object (a function declaration)", decl)
    name = decl.get("name")
    if not isinstance(name, str) or not name:
        raise wrong(f"{where}.name", "a non-empty string", name)
    description = decl.get("description")
    if description is not None and not isinstance(description, str):
        raise wrong(f"{where}.description", "a string", description)
    kwargs: dict[str, Any] = {"name": name, "description": description or ""}
    json_schema = as_object(decl.get("parametersJsonSchema"), f"{where}.parametersJsonSchema")
    parameters = as_object(decl.get("parameters"), f"{where}.parameters")
    if json_schema is not None:
        kwargs["input_schema"] = json_schema
    elif parameters is not None:
        kwargs["input_schema"] = from_openapi(parameters)
        options["_schema_field"] = "parameters"
    elif "parameters" in decl:
        options["_schema_field"] = "parameters"
    extra = {k: v for k, v in decl.items() if k not in _DECLARED}
    if extra:
        declared[name] = extra
    return ToolSpec(**kwargs)


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


# --------------------------------------------------------------------------- replies


def stream_decoder(*, request: Request | None = None) -> StreamDecoder:
    """An incremental decoder for a ``streamGenerateContent?alt=sse`` body."""
    return StreamDecoder(request=request)


def decode_stream(
    chunks: Iterable[bytes], *, request: Request | None = None
) -> Iterator[StreamEvent]:
    """Events as the stream arrives, ending with `StreamEnd` holding the whole reply."""
    return drive_stream(StreamDecoder(request=request), chunks)


__all__ = [
    "BLOCK_REASONS",
    "FINISH_REASONS",
    "STOP_REASONS",
    "WIRE",
    "check_body",
    "decode_error",
    "decode_request",
    "decode_response",
    "decode_stream",
    "encode",
    "encode_error",
    "encode_request",
    "encode_response",
    "encode_stream",
    "stream_decoder",
]


# ------------------------------------------------------------------------ what the provider refuses


def check_body(body: dict[str, Any]) -> str | None:
    """The first rule the raw ``body`` breaks, worded as the provider words it, or None."""
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
    return None


_ERROR_STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                   404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
                   503: "UNAVAILABLE"}


def encode_error(status: int, message: str) -> dict[str, Any]:
    """An error body as this wire's server sends it for ``status``."""
    return {"error": {"code": status, "message": message,
                      "status": _ERROR_STATUSES.get(status, "INTERNAL")}}
