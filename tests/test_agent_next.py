"""What comes after each step is explicit: a `RunStop` ends the run, a `Continue` goes on."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from toolwire.agent.loop import Agent
from toolwire.agent.output import answer_calls, make_output, nudge_for_output
from toolwire.agent.run import Continue, RunState, RunStop
from toolwire.testing import ScriptedModel, call, reply
from toolwire.transcript import Message, Request, ToolCallPart, ToolResultPart


class Answer(BaseModel):
    value: int


def _state(output: bool) -> RunState:
    out = make_output(Answer, "final_answer", ()) if output else None
    return RunState(messages=[Message.user("go")], request_base=Request(model="m"), output=out)


async def _echo(s: RunState, calls: Sequence[ToolCallPart]) -> list[ToolResultPart]:
    return [ToolResultPart(call_id=c.id, name=c.name, content="done") for c in calls]


async def test_answered_calls_and_a_bad_answer_continue_a_good_answer_stops() -> None:
    s = _state(output=True)
    plain = [ToolCallPart(id="a", name="look", arguments={})]
    _, after = await answer_calls(s, plain, _echo, retries=1)
    assert after == Continue("its calls were answered")
    bad = [ToolCallPart(id="b", name="final_answer", arguments={"value": "x"})]
    _, after = await answer_calls(s, bad, _echo, retries=1)
    assert isinstance(after, Continue) and s.output_failures == 1
    _, after = await answer_calls(s, bad, _echo, retries=1)
    assert after is RunStop.OUTPUT_INVALID
    good = [ToolCallPart(id="c", name="final_answer", arguments={"value": 3})]
    _, after = await answer_calls(_state(output=True), good, _echo, retries=1)
    assert after is RunStop.ANSWERED


def test_a_text_answer_when_output_is_wanted_asks_again_then_stops() -> None:
    s = _state(output=True)
    assert isinstance(nudge_for_output(s, retries=1), Continue)
    assert s.messages[-1].role == "user" and "final_answer" in s.messages[-1].text
    assert nudge_for_output(s, retries=1) is RunStop.OUTPUT_INVALID


async def test_steps_that_go_on_have_no_stop_and_the_last_has_its_stop() -> None:
    def look() -> str:
        """Look around."""
        return "nothing"

    model = ScriptedModel([reply(call("look")), "just text", reply(call("final_answer",
                                                                        {"value": 7}))])
    run = Agent(model=model, tools=[look]).steps("go", output=Answer)
    stops = [step.stop async for step in run]
    assert stops == [None, None, RunStop.ANSWERED]
    assert run.result.output == Answer(value=7)
