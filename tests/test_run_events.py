"""One event channel per run: what reaches a run's listeners, and only that run's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from toolwire import Agent, Message, RateLimitError, Reply, RunStop, ServerError, ToolCallPart
from toolwire.emulator import Emulator, Fault
from toolwire.events import (
    MessageAdded,
    ReplyReceived,
    RequestSent,
    RetryEvent,
    RunStopped,
    ToolFinished,
    ToolStarted,
    listen,
)
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.schema.tool import Tool
from toolwire.testing import ScriptedModel, call, reply
from toolwire.transcript import Request


def echo(text: str) -> str:
    """Say it back."""
    return text


async def test_two_runs_sharing_one_model_each_hear_only_their_own_retries(
    tmp_path: Path,
) -> None:
    asked: dict[str, int] = {}

    def answer(request: Request, wire: str) -> Reply | Fault:
        task = request.messages[0].text
        n = asked[task] = asked.get(task, 0) + 1
        if task == "alpha" and n <= 2:
            return Fault(kind="rate_limit", retry_after=0.02)
        if task == "beta" and n == 1:
            return Fault(kind="server_error")
        if request.messages[-1].role != "tool":
            return Reply(message=Message(role="assistant", parts=(
                ToolCallPart(id=f"call_{task}", name="echo", arguments={"text": task}),)),
                stop="tool_calls")
        return Reply(message=Message.assistant(f"{task} done"))

    heard: dict[str, list[Any]] = {"alpha": [], "beta": []}
    outside: list[Any] = []
    async with Emulator(answer) as emu:
        shared = make_model(f"openai-compatible:gpt-4.1@{emu.base_url}", env={},
                            retry=RetryPolicy(base=0.001, max_wait=0.01), seed=3)
        agents = {task: Agent(model=shared, tools=[echo], on_event=heard[task].append)
                  for task in heard}
        with listen(outside.append):  # a listener around both runs hears neither's retries
            results = await asyncio.gather(*(
                agents[task].arun(task, log=tmp_path / f"{task}.jsonl") for task in heard))
        await shared.aclose()
    assert [r.answer for r in results] == ["alpha done", "beta done"]
    retries = {task: [e for e in heard[task] if isinstance(e, RetryEvent)] for task in heard}
    assert [type(e.error) for e in retries["alpha"]] == [RateLimitError, RateLimitError]
    assert [type(e.error) for e in retries["beta"]] == [ServerError]
    assert outside == []
    for task, kinds in (("alpha", ["RateLimitError"] * 2), ("beta", ["ServerError"])):
        text = (tmp_path / f"{task}.jsonl").read_text()
        logged = [json.loads(line) for line in text.splitlines()]
        assert [(e["turn"], e["error_type"]) for e in logged if e["event"] == "retry"] == [
            (1, kind) for kind in kinds]


async def test_every_event_of_a_run_reaches_its_listener_in_order(tmp_path: Path) -> None:
    events: list[Any] = []
    log = tmp_path / "run.jsonl"
    with ScriptedModel([reply("looking", call("echo", {"text": "a"})), "done"]) as model:
        agent = Agent(model=model, tools=[Tool.from_function(echo)], stream=True,
                      on_event=events.append)
        result = await agent.arun("go", log=log)
    stream_kinds = {"TextDelta", "ToolCallStarted", "ToolCallDelta", "ToolCallFinished"}
    kinds = [type(e).__name__ for e in events]
    assert kinds.count("StreamEnd") == 2 and "TextDelta" in kinds
    assert [k for k in kinds if k not in stream_kinds | {"StreamEnd"}] == [
        "MessageAdded", "RequestSent", "FirstToken", "ReplyReceived", "FirstToolStart",
        "ToolStarted", "ToolFinished", "MessageAdded", "RequestSent", "FirstToken",
        "ReplyReceived", "RunStopped"]
    stopped = events[-1]
    assert isinstance(stopped, RunStopped) and stopped.stop == RunStop.ANSWERED
    assert stopped.turns == 2 and stopped.error is None and result.ok
    sent = [e for e in events if isinstance(e, RequestSent)]
    assert [e.turn for e in sent] == [1, 2] and sent[1].request == model.requests[1]
    assert [e.index for e in events if isinstance(e, MessageAdded)] == [0, 2]
    assert [e.index for e in events if isinstance(e, ReplyReceived)] == [1, 3]
    started = [e for e in events if isinstance(e, ToolStarted)]
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [e.turn for e in started + finished] == [1, 1]
    assert finished[0].result.content == "a"
    logged = [json.loads(line)["event"] for line in log.read_text().splitlines()]
    assert logged == ["header", "message", "request", "first_token", "reply", "first_tool",
                      "call_start", "call_end", "message", "request", "first_token", "reply",
                      "stop"]


async def test_a_provider_error_stop_carries_its_error() -> None:
    events: list[Any] = []
    failure = ServerError("500 down for good", status=500, retryable=False)
    with ScriptedModel([failure]) as model:
        result = await Agent(model=model, on_event=events.append).arun("go")
    assert result.stop is RunStop.PROVIDER_ERROR
    stopped = events[-1]
    assert isinstance(stopped, RunStopped) and stopped.stop == "provider_error"
    assert stopped.error is failure


async def test_request_model_is_what_the_provider_calls_the_model(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    async with Emulator([Reply(message=Message.assistant("hi"))]) as emu:
        m = make_model(f"openai-compatible:gpt-4.1@{emu.base_url}", env={})
        run = Agent(model=m).steps("hello", log=log)
        steps = [step async for step in run]
        await m.aclose()
        sent = emu.received[0].body["model"]
    assert steps[0].request.model == sent == m.provider_model == "gpt-4.1"
    head = json.loads(log.read_text().splitlines()[0])
    assert head["model"] == m.name == f"openai-compatible:gpt-4.1@{emu.base_url}"
    assert head["request_model"] == "gpt-4.1"
