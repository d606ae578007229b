"""A real model on this machine: llama.cpp's server with SmolLM2-135M, through three codecs
(Chat Completions, Anthropic Messages and the Responses API at its `/v1/responses`).

Asserts on structure, not wording: a call to the right tool with arguments that validate, the
result sent back and accepted by the server, and a reply after it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from toolwire.agent.loop import Agent, RunStop
from toolwire.http.client import model as make_model
from toolwire.http.local import LocalServer
from toolwire.rules import check_transcript
from toolwire.schema.tool import Tool


@pytest.fixture
def server() -> Iterator[LocalServer]:
    # A fresh server per test: a warm prompt cache can change this small model's greedy choice.
    with LocalServer() as srv:
        yield srv


def weather_tool(seen: list[dict[str, Any]]) -> Tool:
    def get_weather(city: str) -> str:
        seen.append({"city": city})
        return f"18°C and cloudy in {city}"

    return Tool(
        name="get_weather",
        description="Get the current weather for a city.",
        input_schema={"type": "object",
                      "properties": {"city": {"type": "string", "description": "City name"}},
                      "required": ["city"]},
        fn=get_weather,
    )


@pytest.mark.parametrize(
    ("provider", "stream"),
    [("openai-compatible", False), ("openai-compatible", True), ("anthropic", False),
     ("local-responses", False), ("local-responses", True)],
    ids=["openai-chat", "openai-chat-streamed", "anthropic-messages", "openai-responses",
         "openai-responses-streamed"],
)
def test_agent_runs_a_tool_on_a_real_model(server: LocalServer, provider: str,
                                           stream: bool) -> None:
    seen: list[dict[str, Any]] = []
    # Anthropic's current request type has no temperature, so the codec leaves Request.temperature
    # out; a server that takes one (llama.cpp does) gets it as a provider option.
    options = {"temperature": 0.0} if provider == "anthropic" else None
    model = make_model(f"{provider}:smollm2@{server.base_url}", env={}, max_tokens=256,
                       options=options)
    agent = Agent(model=model, tools=[weather_tool(seen)], max_turns=3, temperature=0.0,
                  stream=stream)
    result = agent.run("What is the weather in Paris right now?")
    assert result.stop in (RunStop.ANSWERED, RunStop.TURN_LIMIT), result.error
    first = result.messages[1]
    assert first.role == "assistant"
    calls = first.tool_calls
    assert calls and calls[0].name == "get_weather"
    assert isinstance(calls[0].arguments, dict) and isinstance(calls[0].arguments["city"], str)
    # the tool ran with the validated arguments and its result went back in the next request
    assert seen and seen[0] == calls[0].arguments
    tool_message = result.messages[2]
    assert tool_message.role == "tool"
    assert [r.call_id for r in tool_message.tool_results] == [c.id for c in calls]
    # the server accepted that request and replied to it
    assert result.turns >= 2 and result.messages[3].role == "assistant"
    assert check_transcript(result.messages, model.wire) == []


async def test_local_model_id_starts_and_stops_its_own_server() -> None:
    from toolwire.transcript import Message, Request

    model = make_model("local:smollm2", env={})
    server = model._owned
    assert server is not None and model.endpoint.base_url == server.base_url
    proc = server._proc
    assert proc is not None and proc.poll() is None
    reply = await model.complete(Request(model="x", messages=(Message.user("Say hi."),),
                                         max_tokens=16, temperature=0.0))
    assert reply.message.role == "assistant" and reply.usage.output_tokens > 0
    await model.aclose()
    assert proc.poll() is not None  # the server process is gone
