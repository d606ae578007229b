"""`explain` on real runs in every wire: their run logs, their cassettes, and single bodies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, Message, Reply, TextPart, ToolCallPart, Usage
from toolwire.emulator import Emulator
from toolwire.explain.build import explain_body, explain_file, render_text
from toolwire.http.cassette import RecordTransport
from toolwire.http.client import model as make_model
from toolwire.http.providers import provider_for
from toolwire.schema.tool import Tool
from toolwire.transcript import ReasoningPart
from wire_data import looped

PROVIDER = {wire: provider_for(wire) for wire in looped()}

THINKING = ReasoningPart(text="Look it up.", provider_data={"anthropic-messages": {
    "type": "thinking", "thinking": "Look it up.", "signature": "EqQBsig=="}})


def script(wire: str) -> list[Reply]:
    first: tuple[Any, ...] = (
        TextPart(text="Checking."),
        ToolCallPart(id="call_w1", name="get_weather", arguments={"city": "Oslo"}),
    )
    if wire == "anthropic-messages":
        first = (THINKING, *first)
    return [
        Reply(message=Message(role="assistant", parts=first), stop="tool_calls",
              usage=Usage(input_tokens=30, output_tokens=9)),
        Reply(message=Message.assistant("It is 3°C in Oslo."),
              usage=Usage(input_tokens=60, output_tokens=7)),
    ]


TOOL = Tool(name="get_weather", description="Weather for a city.",
            input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]}, fn=lambda city: f"3°C in {city}")


async def record(wire: str, tmp: Path, stream: bool) -> tuple[Path, Path]:
    log, cassette = tmp / f"{wire}.jsonl", tmp / f"{wire}.cassette.json"
    async with Emulator(script(wire)) as emu:
        model = make_model(f"{PROVIDER[wire]}:m@{emu.base_url}", env={},
                           transport=RecordTransport(cassette))
        agent = Agent(model=model, tools=[TOOL], system="Answer briefly.", stream=stream)
        result = await agent.arun("Weather in Oslo?", log=log)
        await model.aclose()
    assert result.ok
    return log, cassette


def labels(expl: Any) -> list[str]:
    return [e.label for e in expl.entries]


@pytest.mark.parametrize("wire", looped())
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_explain_runs_in_every_wire(wire: str, stream: bool, tmp_path: Path) -> None:
    log, cassette = await record(wire, tmp_path, stream)
    reasoning = ["reasoning, passed back unchanged"] if wire == "anthropic-messages" else []
    expected = ["system prompt", "tool definitions", "user task", *reasoning, "assistant text",
                "tool call get_weather", "result for get_weather", "final answer"]
    for path in (log, cassette):
        expl = explain_file(path)
        assert labels(expl) == expected, path
        call = next(e for e in expl.entries if e.call_id)
        result = next(e for e in expl.entries if e.answers)
        assert result.answers == call.call_id and not result.is_error
        assert expl.stop == "answered"
        assert [(u.input_tokens, u.output_tokens) for u in expl.turn_usage] == [(30, 9), (60, 7)]
        text = render_text(expl)
        assert "stop: answered: the model replied without asking for a tool" in text
        assert "tokens per turn (input/output): 1: 30/9, 2: 60/7" in text
    assert explain_file(cassette).wire == wire


def test_explain_a_reply_body_and_a_cut_off_call() -> None:
    body = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}],
            "stop_reason": "max_tokens", "usage": {"input_tokens": 5, "output_tokens": 100}}
    expl = explain_body(body)
    assert expl.wire == "anthropic-messages"
    assert expl.stop == "truncated"
    assert "cut off at the token limit in the middle of a tool call" in expl.stop_meaning


def test_explain_a_request_says_no_answer_yet() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    expl = explain_body(body)
    assert expl.wire == "openai-chat" and labels(expl) == ["user task"]
    assert expl.stop_meaning == "a request: the model has not answered it yet"


async def test_explain_a_run_log_lists_its_retries_and_what_the_codec_changed(
        tmp_path: Path) -> None:
    from toolwire.emulator import Fault
    from toolwire.http.client import RetryPolicy

    dotted = Tool(name="geo.weather", description="Weather for a city.",
                  input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                                "required": ["city"]}, fn=lambda city: f"3°C in {city}")
    log = tmp_path / "run.jsonl"
    async with Emulator([Fault(kind="rate_limit", retry_after=0.01),
                         Reply(message=Message.assistant("Cold."))]) as emu:
        model = make_model(f"openai-compatible:m@{emu.base_url}", env={},
                           retry=RetryPolicy(base=0.01))
        result = await Agent(model=model, tools=[dotted]).arun("Weather?", log=log)
        await model.aclose()
    assert result.ok
    notes = explain_file(log).notes
    assert "turn 1: the request was retried after RateLimitError: 429 rate_limit_exceeded: " \
           "Rate limit reached; retry after a pause." in notes
    assert any("tool_name_mapped: geo.weather: sent as 'geo_weather'" in n for n in notes)
