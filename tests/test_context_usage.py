"""What a run's context costs: usage and money per turn and per run, and prompt caching asked
for in every wire, over loopback HTTP against the emulator."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from toolwire import Agent, Cache, Message, Reply, RunStop, ToolCallPart, Usage
from toolwire.codecs import get_codec
from toolwire.context.prices import cost_of
from toolwire.emulator import Emulator
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.schema.tool import Tool
from toolwire.transcript import replace
from wire_data import looped, table


def http_model(model_id: str, emu: Emulator) -> Any:
    return make_model(f"{model_id}@{emu.base_url}", env={}, retry=RetryPolicy(base=0.001))


def priced_reply(usage: Usage) -> Reply:
    return Reply(message=Message.assistant("Done."), usage=usage)


USAGE = Usage(input_tokens=10_000, output_tokens=500, cache_read_tokens=6_000,
              cache_write_tokens=2_000)


async def one_reply(model_id: str, usage: Usage, *, stream: bool = False) -> Reply:
    async with Emulator([priced_reply(usage)]) as emu:
        model = http_model(model_id, emu)
        try:
            if stream:
                from toolwire.events import StreamEnd

                async for event in model.stream(_request(model)):
                    if isinstance(event, StreamEnd):
                        return event.reply
                raise AssertionError("no StreamEnd")
            return await model.complete(_request(model))
        finally:
            await model.aclose()


def _request(model: Any) -> Any:
    from toolwire import Request

    return Request(model=model.provider_model, messages=(Message.user("Go."),))


# --------------------------------------------------------------------------- published prices


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_claude_sonnet_4_5_costs_its_published_prices(stream: bool) -> None:
    # Anthropic's published prices per million tokens for Claude Sonnet 4.5 (prompts up to
    # 200k tokens): $3 input, $3.75 5-minute cache writes, $0.30 cache reads, $15 output
    reply = await one_reply("anthropic:claude-sonnet-4-5", USAGE, stream=stream)
    assert reply.usage.input_tokens == 10_000
    assert reply.usage.cache_read_tokens == 6_000 and reply.usage.cache_write_tokens == 2_000
    expected = (2_000 * 3 + 2_000 * 3.75 + 6_000 * 0.30 + 500 * 15) / 1e6
    assert reply.usage.cost == pytest.approx(expected)  # 0.0228


async def test_gpt_4o_costs_its_published_prices() -> None:
    # OpenAI's published prices per million tokens for gpt-4o: $2.50 input, $1.25 cached
    # input, $10 output; writing the cache costs nothing extra
    usage = Usage(input_tokens=10_000, output_tokens=500, cache_read_tokens=6_000)
    reply = await one_reply("openai:gpt-4o", usage)
    expected = (4_000 * 2.50 + 6_000 * 1.25 + 500 * 10) / 1e6
    assert reply.usage.cost == pytest.approx(expected)  # 0.0225


@pytest.mark.parametrize(("model_id", "provider"), [
    ("openai-responses:gpt-5", "openai"),
    ("gemini:gemini-2.5-flash", "google"),
    ("openrouter:anthropic/claude-sonnet-4.5", "openrouter"),
])
async def test_other_models_cost_the_price_tables_figure(model_id: str, provider: str) -> None:
    usage = Usage(input_tokens=10_000, output_tokens=500, cache_read_tokens=6_000)
    reply = await one_reply(model_id, usage)
    model = model_id.split(":", 1)[1]
    expected = cost_of(reply.usage, model, provider)
    assert expected is not None and expected > 0
    assert reply.usage.cost == pytest.approx(expected)


async def test_a_local_model_costs_nothing_and_an_unknown_one_stays_unknown() -> None:
    usage = Usage(input_tokens=1_000, output_tokens=10)
    assert (await one_reply("ollama:llama3.2", usage)).usage.cost == 0.0
    assert (await one_reply("anthropic:no-such-model", usage)).usage.cost is None


async def test_the_providers_own_cost_wins_over_the_table() -> None:
    usage = Usage(input_tokens=10_000, output_tokens=500, cost=0.5)
    reply = await one_reply("openrouter:anthropic/claude-sonnet-4.5", usage)
    assert reply.usage.cost == 0.5


# --------------------------------------------------------------------------- per run, budgets

CALL = Reply(message=Message(role="assistant", parts=(
    ToolCallPart(id="c1", name="echo", arguments={"text": "x"}),)), stop="tool_calls",
    usage=Usage(input_tokens=100_000, output_tokens=1_000))
ECHO = Tool(name="echo", description="Echo text.",
            input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
            fn=lambda text: text)


async def test_cost_budget_stops_a_run_on_a_provider_that_reports_no_cost() -> None:
    # each turn costs 100k * $3 + 1k * $15 per million = $0.315 on Claude Sonnet 4.5
    async with Emulator([CALL, CALL, CALL]) as emu:
        model = http_model("anthropic:claude-sonnet-4-5", emu)
        result = await Agent(model=model, tools=[ECHO], cost_budget=0.5).arun("Go.")
        await model.aclose()
    assert result.stop is RunStop.COST_BUDGET and result.turns == 2
    assert result.usage.cost == pytest.approx(2 * 0.315)
    assert result.usage.input_tokens == 200_000


# --------------------------------------------------------------------------- caching asked for

LIST_KEY = table("HISTORY_KEY")


def _unmarked(value: Any) -> Any:
    """``value`` without cache breakpoints (they mark where to cache; the prefix is the rest)."""
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):  # Converse marks with blocks of their own: cachePoint
        return [_unmarked(v) for v in value if not (isinstance(v, dict) and "cachePoint" in v)]
    return value


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _calls(n: int) -> list[Reply]:
    return [Reply(message=Message(role="assistant", parts=(
        ToolCallPart(id=f"c{k}a", name="echo", arguments={"text": f"first {k}"}),
        ToolCallPart(id=f"c{k}b", name="echo", arguments={"text": f"second {k}"}))),
        stop="tool_calls") for k in range(n)] + [Reply(message=Message.assistant("Done."))]


async def _bodies(wire: str, cache: bool | Cache) -> tuple[list[dict[str, Any]], Any]:
    async with Emulator(_calls(4)) as emu:
        model = make_model(f"{_provider(wire)}:m@{emu.base_url}", env={})
        result = await Agent(model=model, tools=[ECHO, _other()], system="Be brief.",
                             cache=cache).arun("Go.")
        await model.aclose()
    return [r.body for r in emu.received], result


def _provider(wire: str) -> str:
    from toolwire.http.providers import provider_for

    return provider_for(wire)


def _other() -> Tool:
    return Tool(name="other", description="Another tool.",
                input_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
                fn=lambda n=0: n)


@pytest.mark.parametrize("wire", looped())
async def test_the_request_prefix_is_byte_identical_turn_to_turn(wire: str) -> None:
    bodies, result = await _bodies(wire, True)
    assert result.stop is RunStop.ANSWERED and len(bodies) == 5
    key = LIST_KEY[wire]
    for before, after in itertools.pairwise(bodies):
        old, new = _unmarked(before), _unmarked(after)
        grown = new[key][: len(old[key])]
        assert [_text(m) for m in grown] == [_text(m) for m in old[key]]
        assert len(new[key]) > len(old[key])
        rest_old = {k: v for k, v in old.items() if k != key}
        rest_new = {k: v for k, v in new.items() if k != key}
        assert _text(rest_new) == _text(rest_old)  # tools, system, settings: same bytes


def _markers(value: Any) -> list[Any]:
    if isinstance(value, dict):
        here = [value["cache_control"]] if "cache_control" in value else []
        return here + [m for v in value.values() for m in _markers(v)]
    if isinstance(value, list):
        return [m for v in value for m in _markers(v)]
    return []


async def test_anthropic_breakpoints_sit_on_the_prefix_and_the_last_two_requests() -> None:
    bodies, result = await _bodies("anthropic-messages", Cache(ttl="1h"))
    for body in bodies:
        markers = _markers(body)
        assert 2 <= len(markers) <= 4
        assert all(m == {"type": "ephemeral", "ttl": "1h"} for m in markers)
        assert "cache_control" in body["system"][-1]
        last = body["messages"][-1]["content"]
        assert "cache_control" in (last[-1] if isinstance(last, list) else {})
    second = bodies[1]["messages"]
    assert "cache_control" in second[0]["content"][-1]  # where the first request ended
    assert any("breakpoints on the system prompt, the latest message, the end of the previous "
               "request (ttl 1h)" in n for n in result.notes)


async def test_openai_wires_send_a_stable_cache_key() -> None:
    for wire in ("openai-chat", "openai-responses"):
        bodies, _ = await _bodies(wire, True)
        keys = {b["prompt_cache_key"] for b in bodies}
        assert len(keys) == 1 and next(iter(keys)).startswith("toolwire-")
        bodies, _ = await _bodies(wire, Cache(key="mine", retention="24h"))
        assert {(b["prompt_cache_key"], b["prompt_cache_retention"]) for b in bodies} == {
            ("mine", "24h")}


async def test_openrouter_breakpoint_models_get_markers_on_text_parts() -> None:
    async with Emulator(_calls(1)) as emu:
        model = make_model(f"openrouter:anthropic/claude-sonnet-4.5@{emu.base_url}", env={})
        await Agent(model=model, tools=[ECHO], system="Be brief.").arun("Go.")
        await model.aclose()
    body = emu.received[1].body
    assert body["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert 2 <= len(_markers(body)) <= 4


@pytest.mark.parametrize("wire", looped())
async def test_cache_false_sends_no_cache_fields(wire: str) -> None:
    bodies, result = await _bodies(wire, False)
    for body in bodies:
        assert _markers(body) == []
        assert "prompt_cache_key" not in body
    assert not any("cache" in n for n in result.notes)


def test_never_more_than_four_breakpoints_with_the_callers_own() -> None:
    from toolwire import Request, TextPart

    mine = {"anthropic-messages": {"system": [
        {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "c", "cache_control": {"type": "ephemeral"}}]}}
    request = Request(model="m", system=None, provider_options=mine, cache=Cache(),
                      messages=(Message.user("one"), Message.assistant("two"),
                                Message(role="user", parts=(TextPart(text="three"),))))
    body = get_codec("anthropic-messages").encode(request).body
    assert len(_markers(body)) == 4
    assert "cache_control" in body["messages"][-1]["content"][-1]


# --------------------------------------------------------------------------- in the run log

async def test_the_log_and_explain_show_tokens_cache_hits_and_cost_per_turn(tmp_path: Any) -> None:
    from toolwire.agent.runlog import read_log
    from toolwire.explain.build import explain_file, render_text
    from toolwire.explain.html import render_html

    first = replace(CALL, usage=Usage(input_tokens=4_000, output_tokens=100,
                                      cache_write_tokens=3_000))
    second = Reply(message=Message.assistant("Done."),
                   usage=Usage(input_tokens=4_200, output_tokens=20, cache_read_tokens=3_000))
    log = tmp_path / "run.jsonl"
    async with Emulator([first, second]) as emu:
        model = http_model("anthropic:claude-sonnet-4-5", emu)
        result = await Agent(model=model, tools=[ECHO]).arun("Go.", log=log)
        await model.aclose()
    costs = [(1_000 * 3 + 3_000 * 3.75 + 100 * 15) / 1e6,
             (1_200 * 3 + 3_000 * 0.3 + 20 * 15) / 1e6]
    assert result.usage.cost == pytest.approx(sum(costs))
    logged = read_log(log)
    assert [u.cost for u in logged.turn_usage] == pytest.approx(costs)
    assert logged.turn_usage[1].cache_read_tokens == 3_000
    text = render_text(explain_file(log))
    assert (f"turn 1: 4000 in (0 read from the cache, 0%; 3000 written to it), 100 out, "
            f"${costs[0]:.4f}") in text
    assert (f"turn 2: 4200 in (3000 read from the cache, 71%; 0 written to it), 20 out, "
            f"${costs[1]:.4f}") in text
    page = render_html(explain_file(log))
    assert 'id="turn-usage"' in page and "3000 read from the cache, 71%" in page
