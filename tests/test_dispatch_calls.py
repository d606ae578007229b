"""The dispatcher call by call: one parse and one lookup, approvals, time limits, the pool."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pydantic_core
import pytest

import toolwire._json
from toolwire.agent.dispatch import Approval, ApprovalRequest, Dispatcher, cap_text, render_result
from toolwire.errors import ToolError
from toolwire.schema.tool import Tool, Toolset
from toolwire.transcript import ToolCallPart, ToolResultPart


def call(name: str, cid: str = "c0", **arguments: Any) -> ToolCallPart:
    return ToolCallPart(id=cid, name=name, arguments=arguments)


def add(a: int, b: int) -> int:
    return a + b


# -- one parse, one lookup --------------------------------------------------------------------


class Counting(dict[str, Any]):
    """A dict that counts the lookups made in it."""

    lookups = 0

    def __getitem__(self, key: str) -> Any:
        self.lookups += 1
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.lookups += 1
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self.lookups += 1
        return super().__contains__(key)


class CountingToolset(Toolset):
    """A toolset whose index counts lookups: every way to find a tool by name goes through it."""

    def __init__(self, tools: list[Tool]) -> None:
        super().__init__(tools)
        self._index = Counting(self._index)

    @property
    def lookups(self) -> int:
        return self._index.lookups  # type: ignore[attr-defined, no-any-return]


async def test_each_call_is_parsed_once_and_its_tool_looked_up_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parses: list[str] = []

    def counted(real: Any) -> Any:
        def parse(text: Any, *args: Any, **kwargs: Any) -> Any:
            parses.append(text)
            return real(text, *args, **kwargs)

        return parse

    # every parser a call's text can meet: the codec's reader, its fallback, the checker's
    monkeypatch.setattr(toolwire._json, "parse", counted(toolwire._json.parse))
    monkeypatch.setattr(json, "loads", counted(json.loads))
    monkeypatch.setattr("toolwire.schema.validate.from_json", counted(pydantic_core.from_json))
    tools = CountingToolset([Tool.from_function(add)])  # built after the patches: the checker
    dispatcher = Dispatcher(tools)                      # keeps the parser it finds
    assert dispatcher.tools is tools
    texts = ['{"a": 1, "b": 2}', '{"a": 100000000000000000000, "b": 1}', '{"a": 1}']
    made = [ToolCallPart.from_raw(id=f"c{i}", name="add", raw_arguments=t)
            for i, t in enumerate(texts)]
    assert parses == texts  # the codec's one parse each
    results = await dispatcher.run(made)
    assert parses == texts  # and none more
    assert [r.content for r in results[:2]] == ["3", "100000000000000000001"]
    assert results[2].is_error and '"b": missing' in results[2].content
    assert tools.lookups == 3
    assert "add" in tools and tools["add"] and tools.get("add") and tools.lookups == 6


async def test_the_value_is_checked_and_the_text_read_again_only_to_place_a_bad_number() -> None:
    dispatcher = Dispatcher([Tool.from_function(add)])
    made = [
        ToolCallPart.from_raw(id="n", name="add", raw_arguments='{"a": NaN, "b": 1}'),
        ToolCallPart.from_raw(id="i", name="add", raw_arguments='{"a": 1e400, "b": 1}'),
        ToolCallPart.from_raw(id="t", name="add", raw_arguments='{"a": 1, "b": 2'),
        ToolCallPart.from_raw(id="e", name="add", raw_arguments=""),
        ToolCallPart(id="r", name="add", raw_arguments='{"a": 2, "b": 2}'),  # not parsed
        ToolCallPart(id="z", name="add", arguments=None, raw_arguments="null"),
    ]
    results = await dispatcher.run(made)
    assert [r.is_error for r in results] == [True, True, True, True, False, True]
    assert "not valid JSON: NaN is not a JSON value" in results[0].content
    assert "not valid JSON: the number 1e400 is too large for JSON" in results[1].content
    assert "the text stops early" in results[2].content
    assert '"a": missing' in results[3].content and '"b": missing' in results[3].content
    assert results[4].content == "4"
    assert "must be a JSON object, got null" in results[5].content


async def test_an_unknown_tool_is_named_with_the_ones_there_are() -> None:
    results = await Dispatcher([Tool.from_function(add)]).run([call("sum", a=1)])
    assert results == [ToolResultPart(
        call_id="c0", name="sum", is_error=True,
        content='Unknown tool "sum". Available tools: "add".',
    )]


# -- settings ---------------------------------------------------------------------------------


def test_defaults_and_policy_settings() -> None:
    d = Dispatcher([])
    assert (d.max_concurrency, d.timeout, d.max_output_chars) == (8, 300.0, 50_000)
    assert (d.approve, d.policy("x")) == (None, "allow")
    assert Dispatcher([], max_concurrency=1).max_concurrency == 1
    with pytest.raises(ValueError) as info:
        Dispatcher([], max_concurrency=0)
    assert str(info.value) == "max_concurrency must be at least 1"
    d = Dispatcher([], policy={"*": "deny", "read": "allow"})
    assert (d.policy("read"), d.policy("write")) == ("allow", "deny")
    d = Dispatcher([], policy={"write": "ask"})
    assert (d.policy("read"), d.policy("write")) == ("allow", "ask")
    assert Dispatcher([], policy="ask").policy("any") == "ask"
    with pytest.raises(ValueError) as info:
        Dispatcher([], policy={"*": "maybe"})  # type: ignore[dict-item]
    assert str(info.value) == (
        "approval policy for '*' is 'maybe'; use ('allow', 'ask', 'deny', 'defer')"
    )
    with pytest.raises(ValueError, match="for 'x' is 'never'"):
        Dispatcher([], policy={"x": "never"})  # type: ignore[dict-item]


def test_approval_values() -> None:
    assert Approval.allow() == Approval(True, None)
    assert Approval.deny() == Approval(False, None)
    assert Approval.deny("no") == Approval(False, "no")


# -- approvals --------------------------------------------------------------------------------


async def test_policies_and_approvers() -> None:
    asked: list[tuple[str, str, dict[str, Any]]] = []

    def approver(request: ApprovalRequest) -> Any:
        asked.append((request.call.id, request.tool.name, dict(request.arguments)))
        answers: dict[str, Any] = {
            "yes": True, "no": False, "why": Approval.deny("too risky"), "ok": Approval.allow(),
        }
        return answers[request.call.id]

    tools = [Tool.from_function(add), Tool.from_function(add, name="blocked")]
    dispatcher = Dispatcher(tools, policy={"add": "ask", "blocked": "deny"}, approve=approver)
    results = await dispatcher.run([
        call("add", "yes", a=1, b=1), call("add", "no", a=1, b=2),
        call("add", "why", a=1, b=3), call("add", "ok", a=1, b=4),
        call("blocked", "b", a=1, b=5), call("add", "bad", a="x", b=1),
    ])
    assert asked == [("yes", "add", {"a": 1, "b": 1}), ("no", "add", {"a": 1, "b": 2}),
                     ("why", "add", {"a": 1, "b": 3}), ("ok", "add", {"a": 1, "b": 4})]
    assert [(r.call_id, r.content) for r in results[:5]] == [
        ("yes", "2"),
        ("no", "The user declined this call to 'add'."),
        ("why", "The user declined this call to 'add'. Their reason: too risky"),
        ("ok", "5"),
        ("b", "The run's approval policy declined this call: the tool 'blocked' is not "
              "allowed to run (no one was asked)."),
    ]
    assert results[5].is_error and '"a": got "x", want an integer' in results[5].content
    assert [r.name for r in results] == ["add"] * 4 + ["blocked", "add"]


async def test_async_approvers_awaitable_answers_and_failing_approvers() -> None:
    async def in_loop(request: ApprovalRequest) -> bool:
        return bool(request.arguments["a"] > 0)

    async def later() -> Approval:
        return Approval.deny("later")

    def gives_awaitable(request: ApprovalRequest) -> Any:
        return later()

    def broken(request: ApprovalRequest) -> bool:
        raise RuntimeError("no terminal")

    tools = [Tool.from_function(add)]
    yes, no = call("add", "p", a=1, b=1), call("add", "n", a=-1, b=1)
    assert [r.content for r in await Dispatcher(tools, policy="ask", approve=in_loop).run(
        [yes, no])] == ["2", "The user declined this call to 'add'."]
    results = await Dispatcher(tools, policy="ask", approve=gives_awaitable).run([yes])
    assert results[0].content == "The user declined this call to 'add'. Their reason: later"
    results = await Dispatcher(tools, policy="ask", approve=broken).run([yes])
    assert results[0].content == (
        "The call to 'add' was not run: asking the user for approval failed "
        "(RuntimeError: no terminal)."
    )
    results = await Dispatcher(tools, policy="ask").run([yes])
    assert results[0].content == (
        "The call to 'add' needs the user's approval, but no user is available to give it, "
        "so it was not run."
    )


# -- hooks ------------------------------------------------------------------------------------


async def test_hooks_with_several_runnable_calls() -> None:
    log: list[tuple[str, str, bool]] = []
    seconds: list[float] = []

    def on_end(c: ToolCallPart, r: ToolResultPart, s: float) -> None:
        log.append(("end", c.id, r.is_error))
        seconds.append(s)

    begun = time.perf_counter()
    results = await Dispatcher([Tool.from_function(add)]).run(
        [call("add", "a", a=1, b=1), call("nope", "x"), call("add", "b", a=2, b=2)],
        on_start=lambda c: log.append(("start", c.id, False)),
        on_end=on_end,
    )
    spent = time.perf_counter() - begun
    assert [r.content for r in results] == ["2", results[1].content, "4"]
    assert log[0] == ("end", "x", True) and seconds[0] == 0.0
    assert sorted(log[1:]) == [("end", "a", False), ("end", "b", False),
                               ("start", "a", False), ("start", "b", False)]
    assert log.index(("start", "a", False)) < log.index(("end", "a", False))
    assert all(0.0 <= s <= spent for s in seconds)


# -- running ----------------------------------------------------------------------------------


async def test_failures_become_results_with_their_text() -> None:
    def raises() -> None:
        raise ValueError("boom")

    def refuses() -> None:
        raise ToolError("not today")

    def times_out_itself() -> None:
        raise TimeoutError("the server did not answer")

    def unsendable() -> object:
        return object()

    def long() -> str:
        return "x" * 100

    tools = [Tool.from_function(f) for f in (raises, refuses, times_out_itself, unsendable, long)]
    results = await Dispatcher(tools, max_output_chars=8).run(
        [call(t.name, f"c{i}") for i, t in enumerate(tools)]
    )
    assert [r.content for r in results[:4]] == [
        "Tool 'raises' failed: ValueError: boom",
        "not today",
        "Tool 'times_out_itself' failed: TimeoutError: the server did not answer",
        "Tool 'unsendable' returned a object value that cannot be sent as JSON "
        "(Unable to serialize unknown type: <class 'object'>).",
    ]
    assert all(r.is_error and r.name == t.name for r, t in zip(results[:4], tools[:4], strict=True))
    assert results[4] == ToolResultPart(call_id="c4", name="long", content=cap_text("x" * 100, 8))


async def test_a_tools_own_time_limit_wins_over_the_dispatchers() -> None:
    async def wait(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "done"

    quick = Tool.from_function(wait, name="quick", timeout=0.05)
    patient = Tool.from_function(wait, name="patient", timeout=5.0)
    plain = Tool.from_function(wait, name="plain")
    results = await Dispatcher([quick, patient], timeout=None).run(
        [call("quick", "q", seconds=2.0)]
    )
    assert results[0].content == (
        "Tool 'quick' did not finish within 0.05 seconds; it was abandoned and gave no result."
    )
    results = await Dispatcher([quick, patient, plain], timeout=0.05).run(
        [call("patient", "p", seconds=0.2), call("plain", "n", seconds=2.0)]
    )
    assert results[0].content == "done"
    assert results[1].content == (
        "Tool 'plain' did not finish within 0.05 seconds; it was abandoned and gave no result."
    )
    assert results[1].is_error


async def test_one_at_a_time() -> None:
    running = 0
    peak = 0

    async def step(n: int) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        running -= 1
        return n

    dispatcher = Dispatcher([Tool.from_function(step)], max_concurrency=1)
    results = await dispatcher.run([call("step", f"c{n}", n=n) for n in range(4)])
    assert [r.content for r in results] == ["0", "1", "2", "3"]
    assert peak == 1


def test_the_cap_is_kept_on_every_event_loop() -> None:
    async def step(n: int) -> int:
        await asyncio.sleep(0)
        return n

    dispatcher = Dispatcher([Tool.from_function(step)], max_concurrency=1)
    for _ in range(2):  # a second loop gets its own slots (a semaphore is bound to one loop)
        results = asyncio.run(dispatcher.run([call("step", f"c{n}", n=n) for n in range(3)]))
        assert [r.content for r in results] == ["0", "1", "2"]


async def test_sync_tools_run_in_the_dispatchers_own_pool() -> None:
    threads: list[str] = []
    overlapped = threading.Event()
    inside = threading.Event()

    def work(n: int) -> int:
        threads.append(threading.current_thread().name)
        if inside.is_set():
            overlapped.set()
        inside.set()
        overlapped.wait(0.3)  # a second worker would start meanwhile and set it
        inside.clear()
        return n

    dispatcher = Dispatcher([Tool.from_function(work)], max_concurrency=1)
    # two replies at once, one call each: only the pool limits them
    done = await asyncio.gather(dispatcher.run([call("work", "a", n=1)]),
                                dispatcher.run([call("work", "b", n=2)]))
    assert [r[0].content for r in done] == ["1", "2"]
    assert not overlapped.is_set()
    assert len(threads) == 2 and all(t.startswith("toolwire-tool") for t in threads)
    dispatcher.close()


async def test_close_cancels_queued_calls_and_does_not_wait() -> None:
    started: list[int] = []
    finished: list[int] = []
    release = threading.Event()

    def slow(n: int) -> int:
        started.append(n)
        release.wait(5)
        finished.append(n)
        return n

    dispatcher = Dispatcher([Tool.from_function(slow)], max_concurrency=1)
    first = asyncio.create_task(dispatcher.run([call("slow", "a", n=1)]))
    second = asyncio.create_task(dispatcher.run([call("slow", "b", n=2)]))
    for _ in range(500):
        if started:
            break
        await asyncio.sleep(0.01)
    dispatcher.close()
    assert finished == []  # close did not wait for the running tool
    release.set()
    assert (await first)[0].content == "1"
    with pytest.raises(asyncio.CancelledError):
        await second
    assert started == [1]  # the queued call never ran
    dispatcher.close()  # closing twice is harmless
    results = await dispatcher.run([call("slow", "c", n=3)])  # a new pool
    assert results[0].content == "3"
    dispatcher.close()


# -- rendering --------------------------------------------------------------------------------


def test_render_keeps_non_ascii_text() -> None:
    assert render_result({"name": "café"}) == '{"name": "café"}'
    assert render_result([1.5, "ü"]) == '[1.5, "ü"]'


def test_cap_text_edges() -> None:
    assert cap_text("abcd", 4) == "abcd"
    text = "0123456789" * 2
    assert cap_text(text, 8) == "012345\n[... 12 of 20 characters cut here ...]\n89"
    assert cap_text("abc", 0) == "\n[... 3 of 3 characters cut here ...]\n"
