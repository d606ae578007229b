"""Examples in tool definitions: checked when the tool is made, sent as Anthropic's
``input_examples``, folded into the description on wires without such a field."""

from __future__ import annotations

import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from pydantic import TypeAdapter

from toolwire import Message, Request, ToolDefinitionError
from toolwire.codecs import get_codec
from toolwire.schema.tool import Tool
from toolwire.transcript_json import from_json, to_json

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"},
                                          "days": {"type": "integer", "minimum": 1}},
          "required": ["city"]}
TOOL = Tool(name="forecast", description="Weather forecast.", input_schema=SCHEMA,
            examples=[{"city": "Paris"}, {"city": "Köln", "days": 3}])


def _request() -> Request:
    return Request(model="m", messages=(Message.user("hi"),), tools=(TOOL.spec,), max_tokens=50)


def test_each_example_is_checked_against_the_schema_when_the_tool_is_made() -> None:
    assert TOOL.spec.examples == ({"city": "Paris"}, {"city": "Köln", "days": 3})
    with pytest.raises(ToolDefinitionError, match=r"example 2 .*'days': 0"):
        Tool(name="forecast", input_schema=SCHEMA, examples=[{"city": "Rome"},
                                                             {"city": "Rome", "days": 0}])
    with pytest.raises(ToolDefinitionError, match="example 1"):
        Tool(name="forecast", input_schema=SCHEMA, examples=[{"town": "Rome"}])


def test_anthropic_sends_input_examples_the_sdk_accepts() -> None:
    encoded = get_codec("anthropic-messages").encode(_request())
    tool = encoded.body["tools"][0]
    assert tool["input_examples"] == [{"city": "Paris"}, {"city": "Köln", "days": 3}]
    assert tool["description"] == "Weather forecast."
    TypeAdapter(MessageCreateParamsNonStreaming).validate_python(encoded.body, extra="forbid")


@pytest.mark.parametrize("wire", ["openai-chat", "openai-responses", "ollama-chat",
                                  "gemini-generate", "bedrock-converse",
                                  "gemini-interactions"])
def test_other_wires_fold_the_examples_into_the_description_with_a_note(wire: str) -> None:
    encoded = get_codec(wire).encode(_request())
    text = str(encoded.body)
    assert "Examples of arguments:" in text and "Köln" in text
    assert "input_examples" not in text
    assert [n.kind for n in encoded.notes if n.subject == "forecast"].count("examples_folded") == 1


def test_examples_survive_a_transcript_round_trip() -> None:
    assert from_json(to_json(TOOL.spec)) == TOOL.spec


def forecast(city: str, days: int = 1) -> str:
    """Weather forecast.

    Args:
        city: The city.
        days: How many days.

    Examples:
        {"city": "Paris"}
        {"city": "Lyon", "days": 2}
    """
    return city


def test_a_docstring_examples_section_gives_the_examples() -> None:
    assert Tool.from_function(forecast).spec.examples == ({"city": "Paris"},
                                                          {"city": "Lyon", "days": 2})
    assert Tool.from_function(forecast).description == "Weather forecast."
    assert Tool.from_function(forecast, examples=[]).spec.examples == ()


def test_a_bad_docstring_example_is_named() -> None:
    def bad(city: str) -> str:
        """Weather.

        Examples:
            {"city": 3}
        """
        return city

    def broken(city: str) -> str:
        """Weather.

        Example:
            {"city": "Paris"
        """
        return city

    with pytest.raises(ToolDefinitionError, match=r"example 1 \({'city': 3}\)"):
        Tool.from_function(bad)
    with pytest.raises(ToolDefinitionError, match="not JSON"):
        Tool.from_function(broken)
