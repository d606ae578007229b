"""The failure table of fallback chains, a test per row: the failures that move the chain on to
its next model (the run goes on there) and those that end the run, naming the model; each over
loopback HTTP against the emulator, in two directions between different wires."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from toolwire import (
    Agent,
    Message,
    ProviderError,
    Reply,
    RunStop,
    ServerError,
    ToolCallPart,
    fallback,
)
from toolwire.emulator import Emulator, Fault, Raw
from toolwire.events import ModelChosen, RetryEvent
from toolwire.failover import FAILURES
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.http.providers import provider_for
from toolwire.testing import ScriptedModel

DIRECTIONS = [("anthropic-messages", "openai-responses"), ("openai-chat", "gemini-generate")]
ANSWER = Reply(message=Message.assistant("Answered by the next model."))


def not_found(wire: str) -> list[Raw]:
    from toolwire.codecs import get_codec

    return [Raw(body=json.dumps(get_codec(wire).encode_error(404, "no such model")).encode(),
                status=404)]


MOVES_ON: dict[str, Any] = {
    "overloaded": (lambda wire: [Fault("overloaded"), Fault("overloaded")], False),
    "rate_limited": (lambda wire: [Fault("rate_limit", retry_after=0),
                                   Fault("rate_limit", retry_after=0)], False),
    "server_error": (lambda wire: [Fault("server_error"), Fault("server_error")], False),
    "stream_broke": (lambda wire: [Fault("drop_mid_stream"), Fault("drop_mid_stream")], True),
    "bad_reply": (lambda wire: [Fault("malformed_chunk"), Fault("malformed_chunk")], True),
    "context_too_long": (lambda wire: [], False),  # the emulator's window refuses it
}
ENDS: dict[str, Any] = {
    "auth": lambda wire: [Fault("auth")],
    "bad_request": lambda wire: [Fault("bad_request")],
    "not_found": not_found,
}


def test_every_row_of_the_table_is_tested_here() -> None:
    rows = {row.why: row.moves_on for row in FAILURES}
    assert {k for k, v in rows.items() if v} == set(MOVES_ON)
    assert {k for k, v in rows.items() if not v} == set(ENDS) | {"provider_error"}


async def run(first: str, second: str, script: list[Any], *, stream: bool,
              window: bool = False) -> tuple[Any, Emulator, list[Any]]:
    events: list[Any] = []
    windows = {"first-model": 5} if window else None
    async with Emulator(script, bill=window, windows=windows) as emu:
        models = [make_model(f"{provider_for(w)}:{n}@{emu.base_url}", env={},
                             retry=RetryPolicy(max_attempts=2, base=0.001, max_wait=0.001))
                  for w, n in ((first, "first-model"), (second, "second-model"))]
        chain = fallback(*models)
        result = await Agent(model=chain, stream=stream, on_event=events.append).arun("Hello?")
        await chain.aclose()
        emu.assert_done()
    return result, emu, events


@pytest.mark.parametrize(("first", "second"), DIRECTIONS)
@pytest.mark.parametrize("why", sorted(MOVES_ON))
def test_a_failure_that_moves_on_hands_the_request_to_the_next_model(
        why: str, first: str, second: str) -> None:
    faults, stream = MOVES_ON[why]
    result, emu, events = asyncio.run(run(first, second, [*faults(first), ANSWER],
                                          stream=stream, window=why == "context_too_long"))
    assert result.stop == RunStop.ANSWERED, result.error
    assert result.answer == "Answered by the next model."
    chosen = [e for e in events if isinstance(e, ModelChosen)]
    assert len(chosen) == 1 and chosen[0].model is not None
    assert "second-model" in chosen[0].model
    assert [(f[0].rsplit("@")[0].split(":")[1], f[1]) for f in chosen[0].failed] == [
        ("first-model", why)]
    assert [r.wire for r in emu.received] == [first] * max(1, len(faults(first))) + [second]
    if stream and why == "stream_broke":  # pieces of the broken reply were given: started over
        assert any(isinstance(e, RetryEvent) and e.wait == 0.0 for e in events)


@pytest.mark.parametrize(("first", "second"), DIRECTIONS)
@pytest.mark.parametrize("why", sorted(ENDS))
def test_a_failure_that_ends_the_run_names_the_model_and_tries_no_other(
        why: str, first: str, second: str) -> None:
    result, emu, events = asyncio.run(run(first, second, ENDS[why](first), stream=False))
    assert result.stop == RunStop.PROVIDER_ERROR
    assert isinstance(result.error, ProviderError)
    assert "first-model" in str(result.error)
    assert [r.wire for r in emu.received] == [first]  # the second model was never asked
    chosen = [e for e in events if isinstance(e, ModelChosen)]
    assert [(c.model, [f[1] for f in c.failed]) for c in chosen] == [(None, [why])]


def test_any_other_provider_error_ends_the_run() -> None:
    odd = ProviderError("a status no row names", status=418)
    first = ScriptedModel([odd], name="first-model")
    second = ScriptedModel([], name="second-model")
    result = Agent(model=fallback(first, second)).run("Hello?")
    assert result.stop == RunStop.PROVIDER_ERROR
    assert str(result.error).startswith("418 model first-model: a status no row names")
    assert result.error.__cause__ is odd


def test_when_every_model_fails_the_run_ends_with_the_last_error_naming_them_all() -> None:
    first = ScriptedModel([ServerError("down", status=500)], name="first-model")
    second = ScriptedModel([ServerError("down too", status=502)], name="second-model")
    events: list[Any] = []
    result = Agent(model=fallback(first, second), on_event=events.append).run("Hello?")
    assert result.stop == RunStop.PROVIDER_ERROR
    assert str(result.error) == ("502 model second-model: down too (before it: first-model: "
                                 "server_error)")
    chosen = [e for e in events if isinstance(e, ModelChosen)]
    assert [(c.model, [f[:2] for f in c.failed]) for c in chosen] == [
        (None, [("first-model", "server_error"), ("second-model", "server_error")])]


def test_without_sticky_each_turn_starts_at_the_top_and_with_it_stays() -> None:
    call = Reply(message=Message(role="assistant", parts=(
        ToolCallPart(id="c1", name="echo", arguments={"text": "x"}),)), stop="tool_calls")

    def echo(text: str) -> str:
        return text

    for sticky, firsts in ((False, [ServerError("down", status=500), "back again"]),
                           (True, [ServerError("down", status=500)])):
        first = ScriptedModel(firsts, name="first-model")
        second = ScriptedModel([call] if not sticky else [call, "still here"],
                               name="second-model")
        events: list[Any] = []
        result = Agent(model=fallback(first, second, sticky=sticky), tools=[echo],
                       on_event=events.append).run("Hello?")
        assert result.stop == RunStop.ANSWERED
        answered = [e.model for e in events if isinstance(e, ModelChosen)]
        assert answered == (["second-model", "first-model"] if not sticky
                            else ["second-model", "second-model"])
        first.assert_done()
        second.assert_done()




def test_the_table_in_the_docs_is_the_one_the_chain_uses() -> None:
    page = (Path(__file__).resolve().parent.parent / "docs" / "agent.md").read_text()
    table = page.split("<!-- failure table -->\n", 1)[1].split("\n\n", 1)[0]
    rows = [line.split(" | ") for line in table.splitlines()[2:]]
    said = [(row[0].lstrip("| `").split("`")[0], row[-1].rstrip(" |")) for row in rows]
    assert said == [(row.why, "moves on" if row.moves_on else "ends the run")
                    for row in FAILURES]
    for row, line in zip(FAILURES, rows, strict=True):
        assert [e.__name__ for e in row.errors] == [n.strip("` ") for n in line[1].split(",")]


def test_a_sticky_chain_goes_round_to_the_top_when_its_model_fails() -> None:
    call = Reply(message=Message(role="assistant", parts=(
        ToolCallPart(id="c1", name="echo", arguments={"text": "x"}),)), stop="tool_calls")

    def echo(text: str) -> str:
        return text

    first = ScriptedModel([ServerError("down", status=500), "First is back."], name="first")
    second = ScriptedModel([call, ServerError("down too", status=503)], name="second")
    events: list[Any] = []
    result = Agent(model=fallback(first, second, sticky=True), tools=[echo],
                   on_event=events.append).run("Hello?")
    assert result.answer == "First is back."
    assert [(e.model, [f[:2] for f in e.failed]) for e in events
            if isinstance(e, ModelChosen)] == [("second", [("first", "server_error")]),
                                               ("first", [("second", "server_error")])]
