"""MCP as servers use it now, against the official SDK's own server in a subprocess
(tests/fixtures/mcp_server_features.py): structured output, tools added mid-run, elicitation,
resources, media and progress, through an `Agent` over loopback HTTP against the emulator."""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import toolwire
from fixtures.tiny_png import PNG
from toolwire import Agent, RunStop
from toolwire.emulator import Emulator
from toolwire.errors import ToolError
from toolwire.events import ToolAsked, ToolProgress
from toolwire.mcp import McpConnection, McpTools, connect, open_servers
from toolwire.mcp.elicit import CANCEL, DECLINE, NOT_INTERACTIVE, TRIES
from toolwire.transcript import MediaPart, ToolResultPart

FIXTURES = Path(__file__).parent / "fixtures"
FEATURES = [sys.executable, str(FIXTURES / "mcp_server_features.py")]


@pytest.fixture(scope="module")
def features() -> Iterator[McpConnection]:
    """One server for the tests that change nothing on it (no answerer: not interactive)."""
    with connect(FEATURES) as server:
        yield server


def results(run: Any) -> list[ToolResultPart]:
    return [p for m in run.messages if m.role == "tool" for p in m.parts
            if isinstance(p, ToolResultPart)]


async def run_script(script: list[dict[str, Any]], tools: Any, **options: Any) -> Any:
    async with Emulator(script) as emu:
        model = toolwire.model("anthropic:m@" + emu.base_url, env={})
        try:
            run = await Agent(model=model, tools=tools, **options).arun("go")
        finally:
            await model.aclose()
        emu.assert_done()
    return run, emu


# ---------------------------------------------------------------------- structured output


async def test_structured_output_is_checked_and_passed_on_as_json(
        features: McpConnection) -> None:
    listed = {t.name: t for t in features.listing}
    assert listed["pet"].output_schema is not None
    assert await features.call("pet", {"name": "rex"}) == {"name": "rex", "age": 3}
    # a string a server wraps as {"result": ...} is the string again
    assert await features.call("work", {"steps": 1}) == "1 steps done"
    with pytest.raises(ToolError) as bad:
        await features.call("badge", {"name": "rex"})
    message = str(bad.value)
    assert "'badge'" in message and "output schema" in message
    assert "'high' is not of type 'integer'" in message and "\n" not in message


async def test_structured_results_reach_the_model_as_json(features: McpConnection) -> None:
    script = [{"tool_calls": [{"name": "pet", "arguments": {"name": "rex"}},
                              {"name": "badge", "arguments": {"name": "rex"}}]},
              {"text": "done"}]
    run, emu = await run_script(script, features.tools)
    pet, badge = results(run)
    assert json.loads(pet.content) == {"name": "rex", "age": 3} and not pet.is_error
    assert badge.is_error and "breaks the tool's own output schema" in badge.text
    sent = json.dumps(emu.received[1].body)
    assert '\\"age\\": 3' in sent or '\\"age\\":3' in sent


# ---------------------------------------------------------------------- media


async def test_an_image_from_an_mcp_tool_reaches_the_next_request(
        features: McpConnection) -> None:
    script = [{"tool_calls": [{"name": "chart", "arguments": {"city": "Oslo"}}]},
              {"text": "a chart"}]
    run, emu = await run_script(script, features.tools)
    [chart] = results(run)
    [image] = chart.media
    assert (image.kind, image.media_type, image.data) == ("image", "image/png", PNG)
    blocks = [b for m in emu.received[1].body["messages"] for b in m["content"]
              if isinstance(m["content"], list) and b.get("type") == "tool_result"]
    [inner] = [c for b in blocks for c in b["content"] if c.get("type") == "image"]
    assert inner["source"] == {"type": "base64", "media_type": "image/png",
                               "data": base64.b64encode(PNG).decode()}


# ---------------------------------------------------------------------- list_changed


async def test_a_tool_added_mid_run_is_used_on_the_next_turn() -> None:
    script = [{"tool_calls": [{"name": "grow", "arguments": {}}]},
              {"tool_calls": [{"name": "triple", "arguments": {"n": 4}}]},
              {"text": "twelve"}]
    servers = open_servers([FEATURES])
    try:
        before = [t.name for t in servers.tools]
        run, emu = await run_script(script, servers.tools, tool_sources=[servers.tool_source])
    finally:
        servers.close()
    assert run.stop is RunStop.ANSWERED and "triple" not in before
    grown, tripled = results(run)
    assert grown.content == "the triple tool is there now"
    assert not tripled.is_error and tripled.content == "12"
    first, second = ([t["name"] for t in r.body["tools"]] for r in emu.received[:2])
    assert "triple" not in first and second == [*first, "triple"]  # appended after the rest
    assert any("triple" in note for note in run.notes)


# ---------------------------------------------------------------------- elicitation


def answers(*given: str | BaseException) -> tuple[Any, list[tuple[str, Sequence[str] | None]]]:
    asked: list[tuple[str, Sequence[str] | None]] = []
    left = list(given)

    def answer(question: str, choices: Sequence[str] | None) -> str:
        asked.append((question, choices))
        value = left.pop(0)
        if isinstance(value, BaseException):
            raise value
        return value

    return answer, asked


class Answering:
    """An answerer whose answers each test sets (one server serves every elicitation test)."""

    def __init__(self) -> None:
        self.answer: Any = None

    def __call__(self, question: str, choices: Sequence[str] | None) -> str:
        return str(self.answer(question, choices))


@pytest.fixture(scope="module")
def asking() -> Iterator[tuple[McpConnection, Answering]]:
    answering = Answering()
    with connect(FEATURES, answer=answering) as server:
        yield server, answering


async def book(asking: tuple[McpConnection, Answering], answer: Any) -> tuple[str, list[Any]]:
    server, answering = asking
    answering.answer = answer
    events: list[Any] = []
    script = [{"tool_calls": [{"name": "book", "arguments": {"party": "ann"}}]},
              {"text": "ok"}]
    run, _ = await run_script(script, server.tools, on_event=events.append)
    [result] = results(run)
    return result.text, [e for e in events if isinstance(e, ToolAsked)]


Asking = tuple[McpConnection, Answering]


async def test_elicitation_accepted_with_each_field_checked_against_the_schema(
        asking: Asking) -> None:
    answer, asked = answers("nine", "9", "3", "maybe", "no", "")
    text, [event] = await book(asking, answer)
    assert text == "booked for 3, vegan=False, note=''"
    questions = [q for q, _ in asked]
    assert all("Booking a table for ann" in q for q in questions)
    assert "'nine' is not a whole number" in questions[1]
    assert '"guests": got 9, want an integer <= 8' in questions[2]  # checked: le=8
    assert asked[3][1] == ["yes", "no"] and "'maybe' is not yes or no" in questions[4]
    assert "optional" in questions[5]
    assert (event.tool, event.action, event.reason) == ("book", "accept", "")


async def test_elicitation_declined(asking: Asking) -> None:
    answer, _ = answers(DECLINE)
    text, [event] = await book(asking, answer)
    assert text == "not booked: decline" and event.action == "decline"
    answer, _ = answers(ToolError("not now"))
    text, [event] = await book(asking, answer)
    assert text == "not booked: decline" and "not now" in event.reason


async def test_elicitation_cancelled(asking: Asking) -> None:
    answer, _ = answers("2", CANCEL)
    text, [event] = await book(asking, answer)
    assert text == "not booked: cancel" and event.action == "cancel"
    answer, asked = answers(*["0"] * TRIES)
    text, [event] = await book(asking, answer)
    assert text == "not booked: cancel" and len(asked) == TRIES and "Guests" in event.reason


async def test_a_run_nobody_watches_declines_with_the_reason_in_its_log(
        features: McpConnection, tmp_path: Path) -> None:
    script = [{"tool_calls": [{"name": "book", "arguments": {"party": "ann"}}]},
              {"text": "ok"}]
    log = tmp_path / "run.jsonl"
    run, _ = await run_script(script, features.tools, log=log)
    assert results(run)[0].text == "not booked: decline"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    [asked] = [line for line in lines if line["event"] == "asked"]
    assert (asked["tool"], asked["action"], asked["reason"]) == ("book", "decline",
                                                                 NOT_INTERACTIVE)
    assert "Booking a table for ann" in asked["question"]


# ---------------------------------------------------------------------- resources


async def test_resources_are_read_through_read_resource() -> None:
    servers = open_servers([FEATURES], resources=True)
    try:
        reader = {t.name: t for t in servers.tools}["read_resource"]
        assert "notes://today" in reader.description and "notes://day/{day}" in reader.description
        script = [{"tool_calls": [
            {"name": "read_resource", "arguments": {"uri": "notes://today"}},
            {"name": "read_resource", "arguments": {"uri": "notes://day/monday"}},
            {"name": "read_resource", "arguments": {"uri": "pics://logo"}},
            {"name": "read_resource", "arguments": {"uri": "nowhere://x"}}]},
            {"text": "read"}]
        run, _ = await run_script(script, servers.tools)
    finally:
        servers.close()
    today, monday, logo, nowhere = results(run)
    assert (today.content, monday.content) == ("buy milk", "notes of monday")
    assert [p.data for p in logo.media] == [PNG]
    assert nowhere.is_error and "no MCP server offers 'nowhere://x'" in nowhere.text


# ---------------------------------------------------------------------- progress, instructions


async def test_progress_reaches_the_run_and_its_log(features: McpConnection,
                                                    tmp_path: Path) -> None:
    events: list[Any] = []
    script = [{"tool_calls": [{"name": "work", "arguments": {"steps": 3}}]}, {"text": "ok"}]
    log = tmp_path / "run.jsonl"
    await run_script(script, features.tools, on_event=events.append, log=log)
    progress = [e for e in events if isinstance(e, ToolProgress)]
    assert [(e.tool, e.progress, e.total, e.message) for e in progress] == [
        ("work", float(n), 3.0, f"step {n} of 3") for n in (1, 2, 3)]
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    kept = [(line["progress"], line["count"]) for line in logged if line["event"] == "progress"]
    assert kept[0] == (1, 1) and kept[-1][0] == 3  # the first and the last are kept
    assert sum(count for _, count in kept) == 3  # those left out are counted


def test_instructions_join_the_system_prompt_when_asked(features: McpConnection) -> None:
    servers = McpTools([features])  # not closed here: the module's server stays open
    assert servers.system_prompt(None) == (
        "The MCP server 'features' says how to use its tools:\n"
        "Call grow before you need more tools.")
    assert servers.system_prompt("Be brief.").startswith("Be brief.\n\nThe MCP server")
    assert "read_resource" not in [t.name for t in servers.tools]  # only when asked for


# ---------------------------------------------------------------------- deferred servers


async def test_a_deferred_server_is_found_through_search_tools() -> None:
    servers = open_servers([], deferred=[FEATURES])
    script = [{"tool_calls": [{"name": "search_tools", "arguments": {"query": "pet"}}]},
              {"tool_calls": [{"name": "pet", "arguments": {"name": "rex"}}]},
              {"text": "found"}]
    try:
        assert servers.deferred == {t.name for t in servers.tools}
        emulated = Emulator(script)
        async with emulated as emu:
            model = toolwire.model("openai:m@" + emu.base_url, env={})
            try:
                run = await Agent(model=model, tools=servers.tools, deferred=servers.deferred,
                                  tool_sources=[servers.tool_source]).arun("go")
            finally:
                await model.aclose()
    finally:
        servers.close()
    first, second = ([t["function"]["name"] for t in r.body["tools"]] for r in emu.received[:2])
    assert first == ["search_tools"] and second == ["search_tools", "pet"]
    assert json.loads(results(run)[1].content) == {"name": "rex", "age": 3}
    assert isinstance(results(run)[1], ToolResultPart)
    assert not any(isinstance(p, MediaPart) for r in results(run) for p in r.media)


async def test_a_hostile_form_is_declined_or_asked_without_failing() -> None:
    from mcp_types import ElicitRequestFormParams

    from toolwire.mcp.elicit import Asker

    said: list[tuple[str, str, str]] = []
    asker = Asker(lambda question, choices: "7", "odd", lambda *told: said.append(told))
    odd = {"properties": {"n": {"type": "integer"}, "m": "not a schema"}, "required": 3}
    accepted = await asker(None, ElicitRequestFormParams(message="n?", requested_schema=odd))
    assert (accepted.action, accepted.content) == ("accept", {"n": 7, "m": "7"})
    for schema in ({"properties": 4}, {"properties": {"n": {"type": "wat"}}},
                   {"properties": {"n": {"type": "integer", "oneOf": 5, "enum": "x"}}}):
        declined = await asker(None, ElicitRequestFormParams(message="?",
                                                             requested_schema=schema))
        assert declined.action == "decline"
    assert [action for _, action, _ in said] == ["accept", "decline", "decline", "decline"]
    assert "no usable schema" in said[-1][2]
