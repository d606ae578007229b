"""People in the loop: approvals, the ask_user tool, and structured output."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from pydantic import BaseModel

from toolwire.agent.dispatch import Approval, ApprovalRequest
from toolwire.agent.loop import Agent, RunStop
from toolwire.errors import ToolCallError, ToolDefinitionError
from toolwire.rules import check_transcript
from toolwire.schema.tool import Tool, tool
from toolwire.testing import ScriptedModel, call, reply
from toolwire.tools import ask_user
from toolwire.tools.ask_user import NO_USER
from toolwire.transcript import Message, Request, ToolChoice, ToolResultPart

ran: list[str] = []


@tool
def delete(path: str) -> str:
    """Delete a file."""
    ran.append(path)
    return f"deleted {path}"


@tool
def look(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


def sent_results(request: Request) -> tuple[ToolResultPart, ...]:
    assert request.messages[-1].role == "tool"
    return request.messages[-1].tool_results


async def run_once(agent: Agent, task: str = "go", **kwargs: Any) -> Any:
    run = agent.steps(task, **kwargs)
    async for _ in run:
        assert check_transcript(run.messages) == []
    return run.result


# ------------------------------------------------------------------ approvals


async def test_allow_deny_and_default_policies() -> None:
    ran.clear()
    script = [reply(call("delete", {"path": "a"}), call("look", {"path": "b"})), "ok"]
    with ScriptedModel(script) as model:
        agent = Agent(model=model, tools=[delete, look], approval={"delete": "deny"})
        await run_once(agent)
    denied, allowed = sent_results(model.requests[1])
    assert ran == []
    assert denied.is_error
    assert denied.content == (
        "The run's approval policy declined this call: the tool 'delete' is not allowed "
        "to run (no one was asked)."
    )
    assert allowed == ToolResultPart(call_id="call_1_1", content="contents of b", name="look")


async def test_ask_policy_with_callback_allow_and_deny_with_reason() -> None:
    ran.clear()
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> Approval:
        asked.append(request)
        if request.arguments["path"] == "keep.txt":
            return Approval.deny("that file is still needed")
        return Approval.allow()

    calls = [call("delete", {"path": "tmp.txt"}), call("delete", {"path": "keep.txt"})]
    with ScriptedModel([reply(*calls), "ok"]) as model:
        agent = Agent(model=model, tools=[delete, look], approval={"*": "ask", "look": "allow"},
                      approve=approve)
        await run_once(agent)
    assert [a.arguments for a in asked] == [{"path": "tmp.txt"}, {"path": "keep.txt"}]
    assert asked[0].tool is delete and asked[0].call.id == "call_1_0"
    ok, no = sent_results(model.requests[1])
    assert ran == ["tmp.txt"]
    assert ok.content == "deleted tmp.txt" and not ok.is_error
    assert no.is_error and no.content == (
        "The user declined this call to 'delete'. Their reason: that file is still needed"
    )


async def test_ask_with_plain_bool_callback_and_without_any_user() -> None:
    ran.clear()
    with ScriptedModel([reply(call("delete", {"path": "x"})), "ok"]) as model:
        await run_once(Agent(model=model, tools=[delete], approval="ask",
                             approve=lambda request: False))
    (result,) = sent_results(model.requests[1])
    assert result.is_error and result.content == "The user declined this call to 'delete'."
    with ScriptedModel([reply(call("delete", {"path": "x"})), "ok"]) as model:
        await run_once(Agent(model=model, tools=[delete], approval="ask"))
    (result,) = sent_results(model.requests[1])
    assert result.is_error and "no user is available to give it" in result.content
    assert ran == []


async def test_invalid_calls_are_not_sent_for_approval() -> None:
    asked: list[ApprovalRequest] = []
    with ScriptedModel([reply(call("delete", {"file": "x"})), "ok"]) as model:
        await run_once(Agent(model=model, tools=[delete], approval="ask", approve=asked.append))
    assert asked == []
    assert sent_results(model.requests[1])[0].content.startswith('Invalid arguments for tool')


def test_bad_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="approval policy for 'delete'"):
        Agent(model=ScriptedModel([]), tools=[delete], approval={"delete": "maybe"})  # type: ignore[dict-item]


# ------------------------------------------------------------------ ask_user


async def test_ask_user_answered_sync_and_async() -> None:
    questions: list[tuple[str, Sequence[str] | None]] = []

    def answer(question: str, choices: Sequence[str] | None) -> str:
        questions.append((question, choices))
        return "blue"

    ask = call("ask_user", {"question": "Which colour?", "choices": ["red", "blue"]})
    with ScriptedModel([reply(ask), "blue it is"]) as model:
        result = await run_once(Agent(model=model, tools=[ask_user(answer)]))
    assert questions == [("Which colour?", ("red", "blue"))]
    assert sent_results(model.requests[1]) == (
        ToolResultPart(call_id="call_1_0", content="blue", name="ask_user"),
    )
    assert result.stop is RunStop.ANSWERED

    async def answer_async(question: str, choices: Sequence[str] | None) -> str:
        return f"{question} -> yes ({choices})"

    with ScriptedModel([reply(call("ask_user", {"question": "Go on?"})), "ok"]) as model:
        await run_once(Agent(model=model, tools=[ask_user(answer_async)]))
    assert sent_results(model.requests[1])[0].content == "Go on? -> yes (None)"


async def test_ask_user_non_interactive() -> None:
    with ScriptedModel([reply(call("ask_user", {"question": "Which?"})), "guessing"]) as model:
        result = await run_once(Agent(model=model, tools=[ask_user()]))
    (sent,) = sent_results(model.requests[1])
    assert sent.is_error and sent.content == NO_USER
    assert "No user is available" in NO_USER
    assert result.stop is RunStop.ANSWERED and result.answer == "guessing"


def test_ask_user_schema() -> None:
    made = ask_user()
    assert made.name == "ask_user" and made.input_schema["required"] == ["question"]
    assert made.input_schema["additionalProperties"] is False
    assert ask_user(name="ask").name == "ask"


# ------------------------------------------------------------------ structured output


class Weather(BaseModel):
    """The weather in one city."""

    city: str
    temp_c: float


async def test_structured_output_invalid_then_valid() -> None:
    bad = call("final_answer", {"city": "Paris"})
    good = call("final_answer", {"city": "Paris", "temp_c": 21.5})
    with ScriptedModel([reply(bad), reply(good)]) as model:
        result = await run_once(Agent(model=model), "Weather in Paris?", output=Weather)
    assert result.stop is RunStop.ANSWERED and result.turns == 2
    assert result.output == Weather(city="Paris", temp_c=21.5)
    output_tool = Tool.from_model(Weather, name="final_answer")
    with pytest.raises(ToolCallError) as expected:
        output_tool.validate(bad.arguments)
    (sent,) = sent_results(model.requests[1])
    assert sent.is_error and sent.content == str(expected.value)
    assert "temp_c" in sent.content
    first = model.requests[0]
    assert first.tool_choice == ToolChoice(mode="tool", name="final_answer")
    assert [t.name for t in first.tools] == ["final_answer"]
    assert "The weather in one city." in first.tools[0].description
    assert result.messages[-1].tool_results[0].content == "Answer accepted."


async def test_structured_output_with_tools_uses_required_and_ends_early() -> None:
    ran.clear()
    final = call("final_answer", {"city": "Oslo", "temp_c": -3})
    with ScriptedModel([reply(call("look", {"path": "w"})),
                        reply(final, call("delete", {"path": "z"}))]) as model:
        result = await run_once(Agent(model=model, tools=[look, delete]), output=Weather)
    assert model.requests[0].tool_choice == ToolChoice(mode="required")
    assert result.output == Weather(city="Oslo", temp_c=-3)
    accepted, skipped = result.messages[-1].tool_results
    assert not accepted.is_error and skipped.is_error and ran == []
    assert "final answer came in the same reply" in skipped.content


async def test_structured_output_json_schema_and_text_nudge() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    with ScriptedModel(["it is 4", reply(call("final_answer", {"n": 4}))]) as model:
        result = await run_once(Agent(model=model), output=schema)
    assert result.output == {"n": 4}
    nudge = model.requests[1].messages[-1]
    assert nudge == Message.user(
        "Give your final answer by calling the 'final_answer' tool: its arguments are the answer."
    )


async def test_structured_output_gives_up_after_retries() -> None:
    bad = [reply(call("final_answer", {"city": 1})) for _ in range(3)]
    with ScriptedModel(bad) as model:
        result = await run_once(Agent(model=model, output_retries=2), output=Weather)
    assert result.stop is RunStop.OUTPUT_INVALID and result.output is None
    assert result.turns == 3
    with ScriptedModel(["a", "b"]) as model:
        result = await run_once(Agent(model=model, output_retries=1), output=Weather)
    assert result.stop is RunStop.OUTPUT_INVALID


async def test_structured_output_when_tool_cannot_be_forced() -> None:
    good = call("final_answer", {"city": "Rome", "temp_c": 30})
    with ScriptedModel([reply(good)]) as model:
        agent = Agent(model=model, system="You are terse.", can_force_tool=False)
        result = await run_once(agent, output=Weather)
    request = model.requests[0]
    assert request.tool_choice is None
    assert request.system is not None and request.system.startswith("You are terse.")
    assert "'final_answer'" in request.system
    assert any("cannot be forced" in note for note in result.notes)
    assert result.output == Weather(city="Rome", temp_c=30)


def test_output_tool_name_clash() -> None:
    clash = Tool(name="final_answer", fn=lambda: "x")
    with pytest.raises(ToolDefinitionError, match="output_tool"):
        Agent(model=ScriptedModel([]), tools=[clash]).run("go", output=Weather)
    with pytest.raises(TypeError, match="Pydantic model class or a JSON Schema"):
        Agent(model=ScriptedModel([])).run("go", output=int)


async def test_failing_approver_means_not_run() -> None:
    ran.clear()

    def approve(request: ApprovalRequest) -> bool:
        raise EOFError("stdin closed")

    with ScriptedModel([reply(call("delete", {"path": "x"})), "ok"]) as model:
        await run_once(Agent(model=model, tools=[delete], approval="ask", approve=approve))
    (result,) = sent_results(model.requests[1])
    assert ran == [] and result.is_error
    assert result.content == (
        "The call to 'delete' was not run: asking the user for approval failed "
        "(EOFError: stdin closed)."
    )
