"""What a fallback chain leaves behind: the run log's ``model`` lines, ``explain`` (text and
HTML), and the OpenTelemetry spans say which model answered each turn, why the chain moved on
and what the conversation lost on the way."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import toolwire
from test_fallback import TOOL, calls, http_model
from toolwire import Agent, Message, Reply, RunStop, fallback
from toolwire.agent.runlog import read_log
from toolwire.emulator import Emulator, Fault
from toolwire.explain import explain_file, render_text
from toolwire.explain.html import render_html

FIRST, SECOND = "anthropic-messages", "openai-chat"


async def failed_over(log: Path) -> Any:
    script: list[Any] = [calls(FIRST, "Paris", tag="a"), Fault("overloaded"),
                         Reply(message=Message.assistant("18°C in Paris."))]
    async with Emulator(script) as emu:
        chain = fallback(http_model(FIRST, emu, "first-model"),
                         http_model(SECOND, emu, "second-model"), sticky=True)
        result = await Agent(model=chain, tools=[TOOL]).arun("Weather in Paris?", log=log)
        await chain.aclose()
        emu.assert_done()
    return result


def test_the_run_log_and_explain_say_which_model_answered_and_why_the_chain_moved(
        tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    result = asyncio.run(failed_over(log))
    assert result.stop == RunStop.ANSWERED
    run = read_log(log)
    assert [(m["turn"], "second" in (m["model"] or ""), [f[1] for f in m["failed"]])
            for m in run.models] == [(1, False, []), (2, True, ["overloaded"])]
    assert any(loss.startswith("reasoning_dropped") for loss in run.models[1]["losses"])
    text = render_text(explain_file(log))
    assert "model: turn 2: anthropic:first-model" in text
    assert "failed (overloaded: 529 overloaded_error: Overloaded)" in text
    assert "model: turn 2: answered by openai-compatible:second-model" in text
    assert "model: turn 2: lost on the way to openai-compatible:second-model@" in text
    page = render_html(explain_file(log))
    assert '<h2>Models</h2><ul id="models">' in page
    assert "turn 2: answered by openai-compatible:second-model" in page


def test_the_chat_span_says_which_model_answered_and_why_the_chain_moved(
        tmp_path: Path) -> None:
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    toolwire.instrument(tracer_provider=provider)
    try:
        asyncio.run(failed_over(tmp_path / "run.jsonl"))
    finally:
        toolwire.uninstrument()
    chats = [s for s in spans.get_finished_spans() if s.name.startswith("chat ")]
    assert len(chats) == 2
    first, second = (dict(s.attributes or {}) for s in chats)
    assert "first-model" in first["toolwire.fallback.model"]
    assert "second-model" in second["toolwire.fallback.model"]
    assert any(str(loss).startswith("reasoning_dropped")
               for loss in second["toolwire.fallback.losses"])
    [moved] = [e for e in chats[1].events if e.name == "toolwire.fallback"]
    assert moved.attributes is not None
    assert moved.attributes["toolwire.fallback.why"] == "overloaded"
    assert "first-model" in str(moved.attributes["toolwire.fallback.from"])
