"""What a user waits for, over loopback HTTP against the emulator pacing its streams.

A reply streams three calls about a second apart and each tool takes a second: with eager
execution the first tool starts, and finishes, before the reply has ended; without it every
tool starts after. The order of the recorded events is asserted, never a duration. A reply that
breaks off after an early start cancels or keeps the early call, says which, and sends no
result for a call the reply did not complete. A turn after an idle pause longer than the
connection pool's expiry goes out on the connection already open (connections are counted at
the emulator).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from toolwire.agent.loop import Agent, RunStop
from toolwire.emulator import Emulator, Fault, Pacing
from toolwire.events import RetryEvent, StreamEnd, ToolAbandoned, ToolFinished, ToolStarted
from toolwire.http.client import HttpModel, RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.http.transport import HttpTransport
from toolwire.schema.tool import Tool
from toolwire.transcript import Message, Reply, TextPart, ToolCallPart

TOKENS_PER_SECOND = 100.0
PAD = "x" * 380  # with its key and quotes, about 400 characters: 100 tokens, a second


def three_calls() -> Reply:
    calls = tuple(ToolCallPart(id=f"toolu_{n}", name="look", arguments={"key": k, "pad": PAD})
                  for n, k in enumerate("abc", start=1))
    return Reply(message=Message(role="assistant", parts=(TextPart(text="Looking."), *calls)),
                 stop="tool_calls")


def look_tool(ran: list[str], seconds: float) -> Tool:
    async def look(key: str, pad: str) -> str:
        """Look a key up."""
        ran.append(key)
        await asyncio.sleep(seconds)
        return key.upper()

    return Tool.from_function(look, read_only=True)


def http_model(emu: Emulator, **kwargs: Any) -> HttpModel:
    return make_model(f"anthropic:m@{emu.base_url}", env={}, seed=7,
                      retry=RetryPolicy(base=0.001, max_wait=0.01), **kwargs)


async def paced_run(script: list[Any], *, eager: bool, tool_seconds: float = 1.0,
                    log: Path | None = None, retry: RetryPolicy | None = None,
                    ) -> tuple[Any, list[Any], list[str]]:
    events: list[Any] = []
    ran: list[str] = []
    async with Emulator(script, pacing=Pacing(tokens_per_second=TOKENS_PER_SECOND)) as emu:
        model = http_model(emu)
        if retry is not None:
            model.retry = retry
        agent = Agent(model=model, tools=[look_tool(ran, tool_seconds)], stream=True,
                      eager_tools=eager, on_event=events.append)
        result = await agent.arun("Look a, b and c up.", log=log)
        await model.aclose()
    return result, events, ran


def index_of(events: list[Any], kind: type[Any], call_id: str | None = None) -> int:
    return next(i for i, e in enumerate(events) if isinstance(e, kind)
                and (call_id is None or e.call.id == call_id))


async def test_with_eager_execution_the_first_tool_runs_while_the_reply_streams() -> None:
    answer = Reply(message=Message.assistant("A, B and C."))
    result, events, ran = await paced_run([three_calls(), answer], eager=True)
    assert result.stop is RunStop.ANSWERED
    end = index_of(events, StreamEnd)
    assert index_of(events, ToolStarted, "toolu_1") < end
    assert index_of(events, ToolFinished, "toolu_1") < end  # done before the reply was
    assert [e.early for e in events if isinstance(e, ToolStarted)][:2] == [True, True]
    answers = result.messages[2].tool_results
    assert [(r.call_id, r.content) for r in answers] == [
        ("toolu_1", "A"), ("toolu_2", "B"), ("toolu_3", "C")]
    assert sorted(ran) == ["a", "b", "c"]


async def test_without_eager_execution_every_tool_waits_for_the_reply() -> None:
    answer = Reply(message=Message.assistant("A, B and C."))
    result, events, ran = await paced_run([three_calls(), answer], eager=False)
    assert result.stop is RunStop.ANSWERED
    end = index_of(events, StreamEnd)
    starts = [i for i, e in enumerate(events) if isinstance(e, ToolStarted)]
    assert len(starts) == 3 and min(starts) > end
    assert sorted(ran) == ["a", "b", "c"]


async def test_a_reply_that_breaks_after_an_early_start_says_what_became_of_it(
        tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    dropped = Fault("drop_mid_stream", reply=three_calls())
    result, events, ran = await paced_run([dropped], eager=True, tool_seconds=0.05, log=log,
                                          retry=RetryPolicy(max_attempts=1))
    assert result.stop is RunStop.PROVIDER_ERROR
    assert [m.role for m in result.messages] == ["user"]  # no reply, so no result either
    gone = [e for e in events if isinstance(e, ToolAbandoned)]
    assert gone and all(e.call.id == "toolu_1" for e in gone)
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    abandoned = [x for x in lines if x["event"] == "call_abandoned"]
    assert [(a["call_id"], a["finished"]) for a in abandoned] == [
        ("toolu_1", gone[0].finished)]
    said = "had finished" if gone[0].finished else "was cancelled while running"
    assert any(said in n for n in result.notes)
    assert "message" not in [x["event"] for x in lines[2:]]  # no tool results were written
    assert ran == ["a"]


async def test_a_broken_stream_retried_whole_does_not_run_a_started_call_twice() -> None:
    answer = Reply(message=Message.assistant("A, B and C."))
    dropped = Fault("drop_mid_stream", reply=three_calls())
    result, events, ran = await paced_run([dropped, three_calls(), answer], eager=True,
                                          tool_seconds=0.05)
    assert result.stop is RunStop.ANSWERED
    assert sorted(ran) == ["a", "b", "c"]  # "a" started on the broken attempt, kept
    retried = next(i for i, e in enumerate(events) if isinstance(e, RetryEvent))
    assert index_of(events, ToolStarted, "toolu_1") < retried
    assert not [e for e in events if isinstance(e, ToolAbandoned)]
    assert [r.content for r in result.messages[2].tool_results] == ["A", "B", "C"]


@pytest.mark.parametrize("warm", [True, False])
async def test_a_turn_after_tools_outlast_the_pool_expiry_finds_its_connection_open(
        warm: bool) -> None:
    call = ToolCallPart(id="toolu_1", name="look", arguments={"key": "a", "pad": ""})
    script = [Reply(message=Message(role="assistant", parts=(call,)), stop="tool_calls"),
              Reply(message=Message.assistant("A."))]
    ran: list[str] = []
    async with Emulator(script) as emu:
        # the refresher renews a quarter of the expiry before it runs out: 0.25 s here, room
        # enough for a busy machine to wake it in time
        transport = HttpTransport(keepalive_expiry=1.0, warm=warm)
        model = http_model(emu, transport=transport)
        agent = Agent(model=model, tools=[look_tool(ran, 2.5)], stream=True, eager_tools=True)
        result = await agent.arun("Look a up.")
        connections = emu.connections
        await model.aclose()
    assert result.stop is RunStop.ANSWERED and ran == ["a"]
    if warm:  # renewed while the tool ran: the second turn went out on the first connection
        assert connections == 1 and transport.refreshes >= 1
    else:  # the idle connection expired during the tool: the second turn opened another
        assert connections == 2 and transport.refreshes == 0
