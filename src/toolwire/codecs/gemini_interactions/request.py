"""gemini-interactions request bodies, both ways, and what the API refuses in one.

Owns `encode` (a canonical `Request` as the body ``POST /v1beta/interactions`` takes: the model,
``system_instruction``, ``input`` as typed steps, function tools, ``generation_config`` and
``store``, with a `Note` for every change made to fit), `decode_request` (any such body back to
a `Request`; a body of the wrong shape raises `WireFormatError` naming the field) and
`check_body` (the first rule a raw body breaks, worded as the API words it).

The server keeps a conversation when asked (``store``, which it does by default): toolwire
always sends ``store`` itself, false unless ``provider_options["gemini-interactions"]["store"]``
is true, and always holds the whole transcript. With ``store`` on, a request continues from
the last stored interaction in the history (``previous_interaction_id``, and only the messages
after that interaction's reply as ``input``); the codec setting ``"_continue": false`` sends
the whole transcript instead. Pure; imports only the transcript, `toolwire.codecs.base` and
this wire's folder (`input_steps`), `parts` and `schema`; must not import the wire's reply or
stream modules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.codecs.base import Encoded, Note, own_options, wrong_shape
from toolwire.codecs.gemini_interactions import input_steps
from toolwire.codecs.gemini_interactions.parts import (
    INTERACTION,
    TURN_STEPS,
    WIRE,
    StepEncoder,
    decode_content,
    decode_output,
    decode_result,
    name_map,
    own,
)
from toolwire.codecs.gemini_interactions.schema import (
    decode_choice,
    decode_tools,
    encode_choice,
    encode_tools,
)
from toolwire.transcript import Message, Part, Request

_READ = frozenset({"model", "input", "system_instruction", "tools", "stream", "store"})
_CONFIG_READ = frozenset({"max_output_tokens", "temperature", "tool_choice"})


def stored_from(messages: Sequence[Message]) -> tuple[int, str] | None:
    """The last assistant message that came from a stored interaction, and that id."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        entry = own(message.provider_data) if message.role == "assistant" else None
        if entry and isinstance(entry.get(INTERACTION), str) and entry[INTERACTION]:
            return index, entry[INTERACTION]
    return None


def encode(request: Request) -> Encoded:
    """The request body the API documents, and a note for every change made to fit it."""
    notes: list[Note] = []
    names = name_map(request.tools)
    notes.extend(names.notes())
    extra = own_options(request.provider_options, WIRE, notes)
    settings = {k: extra.pop(k) for k in list(extra) if k.startswith("_")}
    store = extra.pop("store", False) is True
    messages = request.messages
    body: dict[str, Any] = {"model": request.model}
    stored = stored_from(messages) if store and settings.get("_continue", True) else None
    if stored is not None and "previous_interaction_id" not in extra:
        body["previous_interaction_id"] = stored[1]
        messages = messages[stored[0] + 1:]
    encoder = StepEncoder(names, [t.name for t in request.tools], notes)
    steps = [step for n, m in enumerate(messages) for step in encoder.message(m, n)]
    body["input"] = steps
    if request.system is not None:
        body["system_instruction"] = request.system
    tools = encode_tools(request.tools, names, notes)
    more = extra.pop("tools", None)
    if isinstance(more, list):
        tools.extend(more)
    if tools:
        body["tools"] = tools
    config: dict[str, Any] = {}
    given = extra.pop("generation_config", None)
    if isinstance(given, Mapping):
        config.update(given)
    if request.max_tokens is not None:
        config["max_output_tokens"] = request.max_tokens
    if request.temperature is not None:
        config["temperature"] = request.temperature
    choice = encode_choice(request.tool_choice, names, notes)
    if choice is not None:
        config["tool_choice"] = choice
    if config:
        body["generation_config"] = config
    if request.stream:
        body["stream"] = True
    body["store"] = store  # the prompt cache is the server's own: Request.cache asks nothing
    body.update(extra)
    return Encoded(body=body, notes=tuple(notes))


# --------------------------------------------------------------------------- decode


def _messages(steps: list[Mapping[str, Any]], names: Any) -> list[Message]:
    messages: list[Message] = []
    model: list[Mapping[str, Any]] = []
    results: list[Part] = []

    def flush_model() -> None:
        if model:
            parts = decode_output(model, "input", names, f"input:{len(messages)}")
            messages.append(Message(role="assistant", parts=tuple(parts)))
            model.clear()

    def flush_results() -> None:
        if results:
            messages.append(Message(role="tool", parts=tuple(results)))
            results.clear()

    for n, step in enumerate(steps):
        kind = step["type"]
        if kind not in TURN_STEPS:
            flush_results()
            model.append(step)
            continue
        flush_model()
        if kind == "function_result":
            results.append(decode_result(step, f"input[{n}]", names, len(results)))
            continue
        flush_results()
        content = decode_content(step.get("content") or [], f"input[{n}].content")
        messages.append(Message(role="user", parts=tuple(content)))
    flush_model()
    flush_results()
    return messages


def decode_request(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
) -> Request:
    """A request body as a canonical `Request`; fields it does not read go to
    ``provider_options["gemini-interactions"]`` (``store`` only when true, toolwire's default
    being false)."""
    system = body.get("system_instruction")
    if system is not None and not isinstance(system, str):
        raise wrong_shape("system_instruction", "a string", system)
    specs, other_tools = decode_tools(body.get("tools"), "tools")
    names = name_map(specs)
    config = body.get("generation_config")
    if config is not None and not isinstance(config, Mapping):
        raise wrong_shape("generation_config", "an object", config)
    config = config or {}
    max_tokens = config.get("max_output_tokens")
    if max_tokens is not None and (not isinstance(max_tokens, int) or isinstance(max_tokens,
                                                                              bool)):
        raise wrong_shape("generation_config.max_output_tokens", "an integer", max_tokens)
    temperature = config.get("temperature")
    if temperature is not None and (not isinstance(temperature, int | float)
                                    or isinstance(temperature, bool)):
        raise wrong_shape("generation_config.temperature", "a number", temperature)
    options: dict[str, Any] = {k: v for k, v in body.items() if k not in _READ}
    rest = {k: v for k, v in config.items() if k not in _CONFIG_READ}
    options.pop("generation_config", None)
    if rest:
        options["generation_config"] = rest
    if other_tools:
        options["tools"] = other_tools
    if body.get("store") is True:
        options["store"] = True
    given_model = body.get("model")
    return Request(
        model=model or (given_model if isinstance(given_model, str) else ""),
        messages=tuple(_messages(input_steps(body.get("input")), names)),
        system=system,
        tools=tuple(specs),
        tool_choice=decode_choice(config.get("tool_choice"), names,
                                  "generation_config.tool_choice"),
        max_tokens=max_tokens,
        temperature=float(temperature) if isinstance(temperature, int) else temperature,
        stream=bool(body.get("stream")) if stream is None else stream,
        provider_options={WIRE: options} if options else None,
    )


def check_body(body: dict[str, Any]) -> str | None:
    """The first rule a raw body breaks, worded as the API words it; None if it keeps them."""
    if not isinstance(body.get("model"), str) or not body.get("model"):
        return "model: Field required"
    value = body.get("input")
    if value is None or value == [] or value == "":
        if not body.get("previous_interaction_id"):
            return "input: Field required"
        return None
    if isinstance(value, list):
        for n, step in enumerate(value):
            if not isinstance(step, dict) or not isinstance(step.get("type"), str):
                return f"input[{n}].type: Field required"
            if step["type"] == "function_call" and not step.get("id"):
                return f"input[{n}].id: Field required"
            if step["type"] == "function_result" and not step.get("call_id"):
                return f"input[{n}].call_id: Field required"
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        return "tools: expected an array"
    for n, tool in enumerate(tools or ()):
        if isinstance(tool, dict) and tool.get("type") == "function" and not tool.get("name"):
            return f"tools[{n}].name: Field required"
    return None
