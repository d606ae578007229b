"""The agent loop with a scripted model: turns, calls, results, failures and every stop reason."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from toolwire.agent.loop import Agent, AgentRun, RunResult, RunStop, Step
from toolwire.errors import ContextLengthError, ServerError, ToolCallError, ToolError
from toolwire.events import StreamEnd, TextDelta, ToolCallFinished
from toolwire.rules import check_transcript
from toolwire.schema.tool import Tool, tool, validate_call
from toolwire.testing import ScriptedModel, call, reply
from toolwire.transcript import (
    Message,
    OpaquePart,
    Request,
    ToolChoice,
    ToolResultPart,
    Usage,
)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def echo(text: str) -> str:
    """Say it back."""
    return text


async def drive(agent: Agent, task: Any, **kwargs: Any) -> tuple[RunResult[Any], list[Step]]:
    """Run to the end, checking the history rule after every turn."""
    steps: list[Step] = []
    run: AgentRun[Any] = agent.steps(task, **kwargs)
    async for step in run:
        steps.append(step)
        problems = check_transcript(run.messages)
        assert problems == [], f"turn {step.turn}: {problems}"
    assert check_transcript(run.result.messages) == []
    return run.result, steps


def results_sent(request: Request) -> tuple[ToolResultPart, ...]:
    """The tool results in the last message of a request."""
    last = request.messages[-1]
    assert last.role == "tool"
    return last.tool_results


async def test_plain_answer() -> None:
    with ScriptedModel(["Paris."]) as model:
        result, steps = await drive(Agent(model=model, system="Be brief."), "Capital of France?")
    assert result.stop is RunStop.ANSWERED and result.stop == "answered"
    assert result.ok and result.answer == "Paris." and result.turns == 1
    assert result.messages == (Message.user("Capital of France?"), Message.assistant("Paris."))
    assert len(steps) == 1 and steps[0].stop is RunStop.ANSWERED and steps[0].done
    assert model.requests[0].system == "Be brief."
    assert model.requests[0].model == "scripted"


async def test_call_then_answer_usage_summed_and_reply_kept_as_it_came() -> None:
    first = reply("Let me add.", call("add", {"a": 2, "b": 3}), usage=Usage(input_tokens=10,
                                                                            output_tokens=5))
    opaque = OpaquePart(wire="anthropic-messages", kind="server_tool_use", payload={"x": 1})
    last = reply(opaque, "It is 5.", usage=Usage(input_tokens=20, output_tokens=3, cost=0.5))
    with ScriptedModel([first, last]) as model:
        result, steps = await drive(Agent(model=model, tools=[add]), "2+3?")
    assert result.answer == "It is 5."
    assert result.usage == Usage(input_tokens=30, output_tokens=8, cost=0.5)
    assert [s.turn for s in steps] == [1, 2] and steps[0].stop is None
    assert steps[0].results == (ToolResultPart(call_id="call_1_0", content="5", name="add"),)
    # the assistant message goes back exactly as it came, then one tool message
    assert model.requests[1].messages[1] == steps[0].reply.message
    assert result.messages[3] == last.message
    assert model.requests[1].tools == (add.spec,)


async def test_results_in_call_order_one_tool_message() -> None:
    calls = [call("echo", {"text": str(i)}) for i in range(6)]
    with ScriptedModel([reply(*calls), "ok"]) as model:
        result, _ = await drive(Agent(model=model, tools=[echo]), "go")
    sent = results_sent(model.requests[1])
    assert [r.content for r in sent] == ["0", "1", "2", "3", "4", "5"]
    assert [r.call_id for r in sent] == [f"call_1_{i}" for i in range(6)]
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant"]


async def test_async_calls_run_concurrently_results_in_call_order() -> None:
    events: list[str] = []
    all_started = asyncio.Event()
    n = 3

    async def slow(name: str) -> str:
        events.append(f"start {name}")
        if sum(e.startswith("start") for e in events) == n:
            all_started.set()
        await asyncio.wait_for(all_started.wait(), 5)  # hangs (then fails) if run one by one
        events.append(f"end {name}")
        return name

    tools = [Tool.from_function(slow)]
    calls = [call("slow", {"name": x}) for x in ("c", "a", "b")]
    with ScriptedModel([reply(*calls), "done"]) as model:
        await drive(Agent(model=model, tools=tools), "go")
    assert events[:3] == ["start c", "start a", "start b"]
    assert sorted(events[3:]) == ["end a", "end b", "end c"]
    assert [r.content for r in results_sent(model.requests[1])] == ["c", "a", "b"]


async def test_sync_calls_run_concurrently_in_threads() -> None:
    barrier = threading.Barrier(3, timeout=5)  # breaks (error results) if calls run one by one
    events: list[str] = []
    lock = threading.Lock()

    def block(name: str) -> str:
        with lock:
            events.append(f"start {name}")
        barrier.wait()
        with lock:
            events.append(f"end {name}")
        return threading.current_thread().name

    calls = [call("block", {"name": x}) for x in "xyz"]
    with ScriptedModel([reply(*calls), "done"]) as model:
        await drive(Agent(model=model, tools=[Tool.from_function(block)]), "go")
    sent = results_sent(model.requests[1])
    assert not any(r.is_error for r in sent)
    assert all(e.startswith("start") for e in events[:3]) and len(events) == 6
    assert all(r.content.startswith("toolwire-tool") for r in sent)
    assert [r.call_id for r in sent] == ["call_1_0", "call_1_1", "call_1_2"]


@pytest.mark.parametrize(
    ("bad", "kind"),
    [
        (call("ad", {"a": 1, "b": 2}), "unknown_tool"),
        (call("add", raw='{"a": 1, "b": '), "invalid_json"),
        (call("add", {"a": 1, "b": "two"}), "schema"),
        (call("add", {"a": 1, "b": 2, "c": 3}), "unknown_field"),
        (call("add", raw="[1, 2]"), "not_an_object"),
    ],
)
async def test_bad_call_recovered_next_turn(bad: Any, kind: str) -> None:
    good = call("add", {"a": 1, "b": 2})
    with ScriptedModel([reply(bad), reply(good), "3"]) as model:
        result, _ = await drive(Agent(model=model, tools=[add]), "1+2")
    with pytest.raises(ToolCallError) as expected:
        validate_call([add], bad.name, bad.wire_arguments)
    assert expected.value.kind == kind
    (sent,) = results_sent(model.requests[1])
    assert sent.is_error and sent.content == str(expected.value)
    assert results_sent(model.requests[2]) == (
        ToolResultPart(call_id="call_2_0", content="3", name="add"),
    )
    assert result.stop is RunStop.ANSWERED


async def test_unknown_tool_text_reaches_model() -> None:
    with ScriptedModel([reply(call("ad", {})), "ok"]) as model:
        await drive(Agent(model=model, tools=[add]), "go")
    (sent,) = results_sent(model.requests[1])
    assert sent.content == 'Unknown tool "ad". Did you mean "add"? Available tools: "add".'


async def test_tool_exception_becomes_error_result() -> None:
    def explode(n: int) -> str:
        raise ValueError(f"no good: {n}")

    async def worded(n: int) -> str:
        raise ToolError("The file is locked; try again later.")

    tools = [Tool.from_function(explode), Tool.from_function(worded)]
    with ScriptedModel([reply(call("explode", {"n": 7}), call("worded", {"n": 1})), "ok"]) as m:
        result, _ = await drive(Agent(model=m, tools=tools), "go")
    first, second = results_sent(m.requests[1])
    assert first.is_error and first.content == "Tool 'explode' failed: ValueError: no good: 7"
    assert second.is_error and second.content == "The file is locked; try again later."
    assert result.stop is RunStop.ANSWERED


async def test_timeouts_async_and_sync() -> None:
    release = threading.Event()

    async def hang() -> str:
        await asyncio.Event().wait()
        return "never"

    def stuck() -> str:
        release.wait(10)
        return "late"

    tools = [Tool.from_function(hang, timeout=0.05), Tool.from_function(stuck)]
    try:
        with ScriptedModel([reply(call("hang"), call("stuck")), "ok"]) as model:
            agent = Agent(model=model, tools=tools, tool_timeout=0.05)
            result, _ = await drive(agent, "go")
    finally:
        release.set()
    a, b = results_sent(model.requests[1])
    assert a.is_error and a.content.startswith("Tool 'hang' did not finish within 0.05 seconds")
    assert b.is_error and b.content.startswith("Tool 'stuck' did not finish within 0.05 seconds")
    assert result.stop is RunStop.ANSWERED


async def test_tool_raising_timeout_itself_is_a_failure_not_our_timeout() -> None:
    def own_timeout() -> str:
        raise TimeoutError("upstream slow")

    with ScriptedModel([reply(call("own_timeout")), "ok"]) as model:
        await drive(Agent(model=model, tools=[Tool.from_function(own_timeout)]), "go")
    (sent,) = results_sent(model.requests[1])
    assert sent.content == "Tool 'own_timeout' failed: TimeoutError: upstream slow"


async def test_return_values_json_unserialisable_and_capped() -> None:
    class Opaque:
        pass

    def data() -> dict[str, Any]:
        return {"ü": [1, 2.5, None, True]}

    def weird() -> Any:
        return Opaque()

    def big() -> str:
        return "x" * 1000

    tools = [Tool.from_function(f) for f in (data, weird, big)]
    script = [reply(call("data"), call("weird"), call("big")), "ok"]
    with ScriptedModel(script) as model:
        await drive(Agent(model=model, tools=tools, max_output_chars=100), "go")
    d, w, b = results_sent(model.requests[1])
    assert d.content == '{"ü": [1, 2.5, null, true]}' and not d.is_error
    assert w.is_error and w.content.startswith("Tool 'weird' returned a Opaque value that cannot")
    assert not b.is_error and "[... 900 of 1000 characters cut here ...]" in b.content
    assert b.content.startswith("x" * 75) and b.content.endswith("x" * 25)


async def test_pause_turn_sends_again_without_results() -> None:
    opaque = OpaquePart(wire="anthropic-messages", kind="server_tool_use", payload={"id": "s1"})
    paused = reply(opaque, stop="pause_turn")
    with ScriptedModel([paused, "found it"]) as model:
        result, steps = await drive(Agent(model=model), "search")
    assert steps[0].stop is None and steps[0].results == ()
    assert model.requests[1].messages[-1] == paused.message
    assert result.stop is RunStop.ANSWERED and result.turns == 2


async def test_truncated_call_is_not_run() -> None:
    ran: list[int] = []

    def record(n: int) -> int:
        ran.append(n)
        return n

    cut = reply(call("record", raw='{"n": 1'), truncated_call=True)
    with ScriptedModel([cut]) as model:
        result, steps = await drive(Agent(model=model, tools=[Tool.from_function(record)]), "go")
    assert ran == []
    assert result.stop is RunStop.CUT_OFF
    assert steps[0].results[0].is_error
    assert "cut off by the output token limit" in steps[0].results[0].content
    assert any("cut off by the token limit in the middle of a tool call" in n for n in result.notes)


@pytest.mark.parametrize(
    ("stop", "expected"),
    [
        ("end_turn", RunStop.ANSWERED),
        ("stop_sequence", RunStop.ANSWERED),
        ("max_tokens", RunStop.CUT_OFF),
        ("refusal", RunStop.REFUSED),
        ("content_filter", RunStop.CONTENT_FILTER),
        ("context_window_exceeded", RunStop.CONTEXT_FULL),
        ("error", RunStop.MODEL_ERROR),
        ("tool_call_failed", RunStop.MODEL_ERROR),
    ],
)
async def test_reply_stops(stop: Any, expected: RunStop) -> None:
    with ScriptedModel([reply("partial", stop=stop)]) as model:
        result, _ = await drive(Agent(model=model), "go")
    assert result.stop is expected and result.answer == "partial"


async def test_turn_limit() -> None:
    script = [reply(call("echo", {"text": "again"})) for _ in range(3)]
    with ScriptedModel(script) as model:
        result, _ = await drive(Agent(model=model, tools=[echo], max_turns=3), "loop")
    assert result.stop is RunStop.TURN_LIMIT and result.turns == 3
    assert result.messages[-1].role == "tool"  # the last calls were still answered


async def test_token_and_cost_budgets() -> None:
    used = Usage(input_tokens=60, output_tokens=40, cost=0.25)
    script = [reply(call("echo", {"text": "a"}), usage=used) for _ in range(2)]
    with ScriptedModel(script) as model:
        result, _ = await drive(Agent(model=model, tools=[echo], token_budget=200), "go")
    assert result.stop is RunStop.TOKEN_BUDGET and result.turns == 2
    with ScriptedModel(script[:1]) as model:
        result, _ = await drive(Agent(model=model, tools=[echo], cost_budget=0.2), "go")
    assert result.stop is RunStop.COST_BUDGET and result.turns == 1


async def test_time_limit_checked_before_the_model_call() -> None:
    with ScriptedModel([]) as model:
        result, steps = await drive(Agent(model=model, time_limit=0), "go")
    assert result.stop is RunStop.TIME_LIMIT and steps == [] and model.requests == []


async def test_provider_errors() -> None:
    with ScriptedModel([ServerError("upstream down", status=503)]) as model:
        result, steps = await drive(Agent(model=model), "go")
    assert result.stop is RunStop.PROVIDER_ERROR and steps == []
    assert isinstance(result.error, ServerError) and result.turns == 0
    with ScriptedModel([reply(call("echo", {"text": "x"})), ContextLengthError("too long")]) as m:
        result, _ = await drive(Agent(model=m, tools=[echo]), "go")
    assert result.stop is RunStop.CONTEXT_FULL and result.turns == 1


async def test_stop_between_turns() -> None:
    script = [reply(call("echo", {"text": str(i)})) for i in range(2)]
    with ScriptedModel(script) as model:
        run = Agent(model=model, tools=[echo]).steps("go")
        seen = []
        async for step in run:
            seen.append(step.turn)
            if step.turn == 2:
                run.stop("enough")
    assert seen == [1, 2]
    assert run.result.stop is RunStop.STOPPED and "enough" in run.result.notes
    assert check_transcript(run.result.messages) == []


async def test_closing_the_iteration_stops_the_run() -> None:
    model = ScriptedModel([reply(call("echo", {"text": "x"})), "unused"])
    async with Agent(model=model, tools=[echo]).steps("go") as run:
        async for _ in run:
            break
    assert run.result.stop is RunStop.STOPPED and model.remaining == 1
    with pytest.raises(RuntimeError, match="has not ended"):
        _ = Agent(model=model).steps("x").result


async def test_streaming_model_events_reach_callback() -> None:
    events: list[object] = []
    with ScriptedModel([reply("hi ", call("echo", {"text": "a"})), "bye"]) as model:
        agent = Agent(model=model, tools=[echo], stream=True, on_event=events.append)
        result, _ = await drive(agent, "go")
    kinds = [type(e) for e in events]
    assert kinds.count(StreamEnd) == 2 and TextDelta in kinds and ToolCallFinished in kinds
    assert result.answer == "bye"


async def test_continue_a_conversation_and_parallel_setting() -> None:
    history = [Message.user("hi"), Message.assistant("hello"), Message.user("add 1 and 1")]
    with ScriptedModel(["2"]) as model:
        result, _ = await drive(Agent(model=model, tools=[add], parallel_calls=False), history)
    assert model.requests[0].messages == tuple(history)
    assert model.requests[0].tool_choice == ToolChoice(parallel=False)
    assert result.messages[:3] == tuple(history)


def test_sync_run_and_not_inside_a_loop() -> None:
    with ScriptedModel(["sync ok"]) as model:
        assert Agent(model=model).run("go").answer == "sync ok"

    async def inside() -> None:
        Agent(model=ScriptedModel([])).run("go")

    with pytest.raises(RuntimeError, match=r"await agent\.arun"):
        asyncio.run(inside())


async def test_many_runs_at_once_share_one_agent() -> None:
    def script(request: Request) -> Any:
        return reply(f"answer to {request.messages[0].text}")

    model = ScriptedModel([script] * 20)
    agent = Agent(model=model)
    results = await asyncio.gather(*(agent.arun(f"q{i}") for i in range(20)))
    assert [r.answer for r in results] == [f"answer to q{i}" for i in range(20)]
    model.assert_done()
