"""The dispatcher on its own: results as values, hooks, the concurrency cap, rendering."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, field_validator

from toolwire.agent.dispatch import Dispatcher, cap_text, render_result
from toolwire.schema.tool import Tool
from toolwire.transcript import ToolCallPart, ToolResultPart


def calls(name: str, *args: dict[str, object]) -> list[ToolCallPart]:
    return [ToolCallPart(id=f"c{i}", name=name, arguments=a) for i, a in enumerate(args)]


async def test_concurrency_cap_is_respected() -> None:
    running = 0
    peak = 0
    gate = asyncio.Event()
    started = 0

    async def work(n: int) -> int:
        nonlocal running, peak, started
        running += 1
        started += 1
        peak = max(peak, running)
        if started == 2:
            gate.set()
        await asyncio.wait_for(gate.wait(), 5)
        await asyncio.sleep(0)
        running -= 1
        return n

    dispatcher = Dispatcher([Tool.from_function(work)], max_concurrency=2)
    results = await dispatcher.run(calls("work", *({"n": i} for i in range(6))))
    assert [r.content for r in results] == ["0", "1", "2", "3", "4", "5"]
    assert peak == 2
    with pytest.raises(ValueError, match="at least 1"):
        Dispatcher([], max_concurrency=0)


async def test_hooks_see_every_call_and_only_run_calls_start() -> None:
    log: list[str] = []

    def ok(x: int) -> int:
        return x

    dispatcher = Dispatcher([Tool.from_function(ok)])
    results = await dispatcher.run(
        [*calls("ok", {"x": 1}), ToolCallPart(id="bad", name="nope", arguments={})],
        on_start=lambda c: log.append(f"start {c.id}"),
        on_end=lambda c, r, s: log.append(f"end {c.id} {r.is_error} {s >= 0}"),
    )
    assert log == ["end bad True True", "start c0", "end c0 False True"]
    assert [r.call_id for r in results] == ["c0", "bad"]
    dispatcher.close()


class Span(BaseModel):
    start: int
    end: int

    @field_validator("end")
    @classmethod
    def not_negative(cls, end: int) -> int:
        if end < 0:
            raise ValueError("end must not be negative")
        return end


async def test_conversion_error_and_definition_only_tool() -> None:
    def measure(span: Span) -> int:
        return span.end - span.start

    tools = [Tool.from_function(measure), Tool(name="remote")]
    dispatcher = Dispatcher(tools)
    results = await dispatcher.run([
        ToolCallPart(id="a", name="measure", arguments={"span": {"start": 1, "end": 4}}),
        ToolCallPart(id="b", name="measure", arguments={"span": {"start": 1, "end": -4}}),
        ToolCallPart(id="c", name="remote", arguments={}),
    ])
    assert results[0] == ToolResultPart(call_id="a", content="3", name="measure")
    assert results[1].is_error and "end must not be negative" in results[1].content
    assert results[2].is_error and "definition only" in results[2].content


async def test_sync_function_returning_awaitable_is_awaited() -> None:
    async def inner() -> str:
        return "inner done"

    def outer() -> object:
        return inner()

    results = await Dispatcher([Tool.from_function(outer)]).run(calls("outer", {}))
    assert results[0].content == "inner done"


def test_render_result() -> None:
    @dataclasses.dataclass
    class Point:
        x: int
        y: int

    class M(BaseModel):
        when: datetime.date

    assert render_result("plain") == "plain"
    assert render_result({"a": [1, None]}) == '{"a": [1, null]}'
    assert render_result(None) == "null"
    assert render_result(Point(1, 2)) == '{"x":1,"y":2}'
    assert render_result(M(when=datetime.date(2024, 1, 2))) == '{"when":"2024-01-02"}'
    assert render_result(math.nan) == "null"
    with pytest.raises(TypeError, match="Unable to serialize"):
        render_result(object())


@settings(max_examples=150, deadline=None)
@given(text=st.text(), limit=st.integers(min_value=1, max_value=300))
def test_cap_text(text: str, limit: int) -> None:
    capped = cap_text(text, limit)
    if len(text) <= limit:
        assert capped == text
    else:
        cut = len(text) - limit
        note = f"\n[... {cut} of {len(text)} characters cut here ...]\n"
        assert note in capped
        head, _, tail = capped.partition(note)
        assert len(head) + len(tail) == limit
        assert text.startswith(head) and text.endswith(tail)
