"""gemini-interactions: a ``POST /v1beta/interactions`` body a client sent, read back into a
canonical `Request` (`decode_request`; a body of the wrong shape raises `WireFormatError`
naming the field), and the first rule a raw body breaks, worded as the API words it
(`check_body`).

Pure: imports the transcript, the shared codec modules and this wire's folder, ``parts``,
``schema`` and ``request``; never the wire's reply or stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.codecs.base import wrong_shape
from toolwire.codecs.gemini_interactions import input_steps
from toolwire.codecs.gemini_interactions.parts import (
    TURN_STEPS,
    WIRE,
    decode_content,
    decode_output,
    decode_result,
    name_map,
)
from toolwire.codecs.gemini_interactions.request import CONFIG_READ, READ
from toolwire.codecs.gemini_interactions.schema import (
    decode_choice,
    decode_tools,
)
from toolwire.transcript import Message, Part, Request


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
    options: dict[str, Any] = {k: v for k, v in body.items() if k not in READ}
    rest = {k: v for k, v in config.items() if k not in CONFIG_READ}
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
