"""The official SDKs' request types as checks on the bodies toolwire sends: every key known,
every value of the type the SDK says (unknown keys are errors). Test-only: the SDKs are test
dependencies, imported here and nowhere in the package."""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

import pydantic_core
from pydantic import TypeAdapter


def _strict_validator(kind: Any) -> pydantic_core.SchemaValidator:
    """A validator for an SDK TypedDict where every ``Iterable[X]`` is checked as ``list[X]``."""
    schema = copy.deepcopy(TypeAdapter(kind).core_schema)
    found = 0

    def walk(node: Any) -> None:
        nonlocal found
        if isinstance(node, dict):
            if node.get("type") == "generator":
                found += 1
                for key in [k for k in node if k not in ("type", "items_schema", "ref")]:
                    del node[key]
                node["type"] = "list"
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    assert found > 0
    assert '"generator"' not in json.dumps(schema, default=str)
    return pydantic_core.SchemaValidator(schema)  # type: ignore[arg-type]


@cache
def _responses(stream: bool) -> pydantic_core.SchemaValidator:
    from openai.types.responses.response_create_params import (
        ResponseCreateParamsNonStreaming,
        ResponseCreateParamsStreaming,
    )

    return _strict_validator(ResponseCreateParamsStreaming if stream
                             else ResponseCreateParamsNonStreaming)


def assert_sdk_valid(body: dict[str, Any]) -> None:
    """``body`` is a Responses request the OpenAI SDK's types accept, nothing coerced."""
    validated = _responses(bool(body.get("stream"))).validate_python(
        copy.deepcopy(body), extra="forbid")
    assert json.loads(json.dumps(validated)) == json.loads(json.dumps(body))


@cache
def _anthropic(beta: bool) -> pydantic_core.SchemaValidator:
    if beta:
        from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming
    else:
        from anthropic.types.message_create_params import (  # type: ignore[assignment]
            MessageCreateParamsNonStreaming,
        )
    return _strict_validator(MessageCreateParamsNonStreaming)


def assert_anthropic_valid(body: dict[str, Any], *, beta: bool = False) -> None:
    """``body`` is a Messages request the Anthropic SDK's types accept (its beta types with
    ``beta``), no unknown key."""
    plain = {k: v for k, v in body.items() if k != "stream"}
    _anthropic(beta).validate_python(copy.deepcopy(plain), extra="forbid")


CHAT_REASONING_KEYS = ("reasoning", "reasoning_content", "reasoning_details")
"""Fields of an assistant message that servers speaking Chat Completions (OpenRouter, vLLM,
DeepSeek) send with their reasoning and take back, which the openai SDK does not declare."""


@cache
def _chat(stream: bool) -> pydantic_core.SchemaValidator:
    from openai.types.chat.completion_create_params import (
        CompletionCreateParamsNonStreaming,
        CompletionCreateParamsStreaming,
    )

    return _strict_validator(CompletionCreateParamsStreaming if stream
                             else CompletionCreateParamsNonStreaming)


def assert_chat_valid(body: dict[str, Any]) -> None:
    """``body`` is a Chat Completions request the OpenAI SDK's types accept, nothing coerced."""
    validated = _chat(bool(body.get("stream"))).validate_python(
        copy.deepcopy(body), extra="forbid")
    assert json.loads(json.dumps(validated)) == json.loads(json.dumps(body))


def assert_chat_valid_but(body: dict[str, Any], *extras: str) -> None:
    """As `assert_chat_valid`, for a body to a compatible server that takes message fields the
    SDK does not declare (``extras``, such as DeepSeek's ``reasoning_content``): they are
    checked to be strings and left out, the rest checked strictly."""
    messages = []
    for message in body.get("messages", []):
        for key in extras:
            if key in message:
                assert isinstance(message[key], str), (key, message[key])
        messages.append({k: v for k, v in message.items() if k not in extras})
    assert_chat_valid({**body, "messages": messages})


@cache
def gemini_body() -> TypeAdapter[Any]:
    """The REST body of generateContent, built from the google-genai SDK's own part types."""
    from google.genai import types as gt
    from pydantic import ConfigDict, create_model
    from pydantic.alias_generators import to_camel

    fields: dict[str, Any] = {
        "contents": (list[gt.Content], ...),
        "system_instruction": (gt.Content | None, None),
        "tools": (list[gt.Tool] | None, None),
        "tool_config": (gt.ToolConfig | None, None),
        "generation_config": (gt.GenerationConfig | None, None),
        "safety_settings": (list[gt.SafetySetting] | None, None),
        "cached_content": (str | None, None),
    }
    config = ConfigDict(alias_generator=to_camel, extra="forbid")
    model = create_model(  # type: ignore[call-overload]
        "GenerateContentBody", __config__=config, **fields)
    adapter: TypeAdapter[Any] = TypeAdapter(model)
    assert "'type': 'generator'" not in str(adapter.core_schema)
    return adapter


def assert_gemini_valid(body: dict[str, Any]) -> None:
    """``body`` is a generateContent request built of the google-genai SDK's types."""
    gemini_body().validate_python(body, extra="forbid")


def _unknown_variants(value: Any, path: str) -> list[str]:
    """Where a validated google-genai Interactions value holds a variant the SDK did not know
    (its unions take an unknown ``type`` leniently, as an ``Unknown*`` value) or a key it does
    not declare (its models keep extra keys)."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        found = [path] if getattr(value, "is_unknown", False) is True else []
        found += [f"{path}.{key}" for key in value.model_extra or {}]
        for name in type(value).model_fields:
            found += _unknown_variants(getattr(value, name), f"{path}.{name}")
        return found
    if isinstance(value, list | tuple):
        return [p for n, item in enumerate(value) for p in _unknown_variants(item, f"{path}[{n}]")]
    if isinstance(value, dict):
        return [p for k, item in value.items() for p in _unknown_variants(item, f"{path}.{k}")]
    return []


def assert_interactions_model(kind: str, body: Any) -> None:
    """``body`` is what google-genai's Interactions types (``google.genai.interactions``) call
    a ``kind`` (``CreateModelInteraction``, ``Interaction``, ``InteractionSSEEvent``): no
    unknown key or variant, and the SDK writes it back as it was (an unknown key inside a
    step, which the SDK's lenient unions drop, shows there)."""
    import warnings

    from google.genai import interactions

    adapter: TypeAdapter[Any] = TypeAdapter(getattr(interactions, kind))
    plain = json.loads(json.dumps(body))
    validated = adapter.validate_python(copy.deepcopy(plain), extra="forbid")
    assert _unknown_variants(validated, kind) == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        again = adapter.dump_python(validated, mode="json", by_alias=True, exclude_none=True)
    for key in ("output_text", "continuation_ids"):  # what the SDK adds to a reply
        if isinstance(again, dict) and key not in plain:
            again.pop(key, None)
    assert again == plain, (again, plain)


def assert_interactions_valid(body: dict[str, Any]) -> None:
    """``body`` is an Interactions request the google-genai SDK's types accept as it is."""
    assert_interactions_model("CreateModelInteraction", body)


def _ollama(body: dict[str, Any]) -> None:
    """The ollama package's types, less the keys the server takes that they do not declare
    (a call's ``id`` and ``function.index``, a result's ``tool_call_id``); an image, base64
    text on the wire, is the SDK's ``Image`` holding that text."""
    from ollama._types import ChatRequest, Tool
    from ollama._types import Message as SdkMessage

    body = copy.deepcopy(body)
    for msg in body["messages"]:
        msg.pop("tool_call_id", None)
        if "images" in msg:  # on the wire base64 text; in the SDK's types an Image holding it
            msg["images"] = [{"value": i} if isinstance(i, str) else i for i in msg["images"]]
        for call in msg.get("tool_calls", ()):
            call.pop("id", None)
            call["function"].pop("index", None)
        TypeAdapter(SdkMessage).validate_python(msg, extra="forbid")
    for spec in body.get("tools", ()):
        TypeAdapter(Tool).validate_python(spec, extra="forbid")
    TypeAdapter(ChatRequest).validate_python(body)


def _bedrock(body: dict[str, Any], model: str) -> None:
    import botocore.session
    from botocore.validate import ParamValidator

    shape = (botocore.session.get_session().get_service_model("bedrock-runtime")
             .operation_model("Converse").input_shape)
    report = ParamValidator().validate({"modelId": model, **json.loads(json.dumps(body))}, shape)
    assert not report.has_errors(), report.generate_report()


def assert_wire_valid(wire: str, body: dict[str, Any], *, model: str = "m") -> None:
    """``body`` is a request the official SDK of ``wire``'s provider types as valid, no
    unknown key (Anthropic's beta types when the body uses a beta field)."""
    if wire == "anthropic-messages":
        assert_anthropic_valid(body, beta=any(k in body for k in ("fallbacks",
                                                                  "context_management")))
    elif wire == "openai-responses":
        assert_sdk_valid(body)
    elif wire == "openai-chat":
        plain = json.loads(json.dumps(body))
        for msg in plain["messages"]:  # reasoning servers of this wire send back, unknown to it
            if msg.get("role") == "assistant":
                for key in CHAT_REASONING_KEYS:
                    msg.pop(key, None)
        validated = _chat(bool(body.get("stream"))).validate_python(
            copy.deepcopy(plain), extra="forbid")
        assert json.loads(json.dumps(validated)) == plain
    elif wire == "gemini-generate":
        gemini_body().validate_python(body, extra="forbid")
    elif wire == "ollama-chat":
        _ollama(body)
    elif wire == "bedrock-converse":
        _bedrock(body, model)
    elif wire == "gemini-interactions":
        assert_interactions_valid(body)
    else:  # a wire added later: its test data says what its SDK takes
        from wire_data import data

        check = getattr(data(wire), "assert_sdk_valid", None)
        if check is None:
            raise AssertionError(f"no SDK types known for wire {wire!r}")
        check(body, model=model)
