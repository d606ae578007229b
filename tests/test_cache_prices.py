"""Cache writes priced as billed: a cached run's cost, checked by hand against the providers'
published prices, over loopback HTTP against the emulator."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire import Agent, Cache, Message, Reply, ToolCallPart, Usage
from toolwire.context.prices import cost_of
from toolwire.emulator import Emulator
from toolwire.events import ReplyReceived
from toolwire.http.client import model as make_model
from toolwire.schema.tool import Tool

ECHO = Tool(name="echo", description="Echo text back.",
            input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
            fn=lambda text: text)
SYSTEM = "You answer carefully. " + " ".join(
    f"Rule {n}: check every figure twice before writing it down." for n in range(200))


def call(usage: Usage, n: int = 1) -> Reply:
    return Reply(message=Message(role="assistant", parts=(
        ToolCallPart(id=f"c{n}", name="echo", arguments={"text": "x"}),)), stop="tool_calls",
        usage=usage)


# Three turns of one run, as Anthropic reports them (input_tokens leaves the cache out; the
# codec adds reads and writes back, so Usage.input_tokens holds the whole prompt):
TURNS = [
    # turn 1: 2,000 uncached, 10,000 written with the 1-hour lifetime
    Usage(input_tokens=12_000, output_tokens=300, cache_write_tokens=10_000,
          cache_write_long_tokens=10_000),
    # turn 2: 10,000 read, 1,500 written for 5 minutes, 500 uncached
    Usage(input_tokens=12_000, output_tokens=200, cache_read_tokens=10_000,
          cache_write_tokens=1_500),
    # turn 3: 11,500 read, 800 written: 300 for an hour, 500 for 5 minutes; 200 uncached
    Usage(input_tokens=12_500, output_tokens=100, cache_read_tokens=11_500,
          cache_write_tokens=800, cache_write_long_tokens=300),
]


async def run(model_id: str, replies: list[Reply], *, stream: bool = False,
              **emulator: Any) -> tuple[Any, list[Usage]]:
    seen: list[Usage] = []

    def on_event(event: object) -> None:
        if isinstance(event, ReplyReceived):
            seen.append(event.reply.usage)

    async with Emulator(replies, **emulator) as emu:
        model = make_model(f"{model_id}@{emu.base_url}", env={"ANTHROPIC_API_KEY": "k",
                                                                "OPENROUTER_API_KEY": "k"})
        result = await Agent(model=model, tools=[ECHO], system=SYSTEM, cache=Cache(ttl="1h"),
                             stream=stream, on_event=on_event).arun("Go.")
        await model.aclose()
    return result, seen


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_cached_run_costs_what_the_invoice_says(stream: bool) -> None:
    # Anthropic's published prices per million tokens for Claude Sonnet 4.5 (prompts up to
    # 200k tokens): $3 input, $3.75 5-minute cache writes (1.25x), $6 1-hour cache writes
    # (2x), $0.30 cache reads (0.1x), $15 output.
    replies = [call(TURNS[0]), call(TURNS[1], 2),
               Reply(message=Message.assistant("Done."), usage=TURNS[2])]
    result, seen = await run("anthropic:claude-sonnet-4-5", replies, stream=stream)
    assert result.ok and seen == [
        Usage(**{**{f: getattr(t, f) for f in t.__struct_fields__}, "cost": s.cost})
        for t, s in zip(TURNS, seen, strict=True)]
    turn1 = 2_000 * 3 + 10_000 * 6 + 300 * 15  # 6,000 + 60,000 + 4,500 = 70,500
    turn2 = 500 * 3 + 10_000 * 0.30 + 1_500 * 3.75 + 200 * 15  # 1,500 + 3,000 + 5,625 + 3,000
    turn3 = 200 * 3 + 11_500 * 0.30 + 500 * 3.75 + 300 * 6 + 100 * 15
    # = 600 + 3,450 + 1,875 + 1,800 + 1,500 = 9,225
    assert [s.cost for s in seen] == pytest.approx([turn1 / 1e6, turn2 / 1e6, turn3 / 1e6])
    assert [turn1, turn2, turn3] == pytest.approx([70_500, 13_125, 9_225])
    assert result.usage.cost == pytest.approx(92_850 / 1e6)  # $0.09285
    assert result.usage.cache_write_long_tokens == 10_300


def test_where_the_price_table_has_no_long_rate_the_rule_table_gives_it() -> None:
    # OpenRouter passes Anthropic's prices on, but the price table has no 1-hour write rate
    # there: the rule table's 2 times the input price ($3) applies, $6 per million
    expected = (2_000 * 3 + 10_000 * 3 * 2 + 300 * 15) / 1e6  # 0.0705
    assert cost_of(TURNS[0], "anthropic/claude-sonnet-4.5", "openrouter") == pytest.approx(
        expected)
    # a model outside the rule's patterns keeps the table's figure
    assert cost_of(TURNS[0], "gpt-5.6", "openai") == pytest.approx(
        (2_000 * 4 + 10_000 * 5 + 300 * 20) / 1e6)  # gpt-5.6 writes at $5: 1.25x its $4


def test_long_writes_priced_as_short_ones_would_undercount() -> None:
    # the same first turn without the lifetime: 10,000 writes at $3.75 instead of $6
    short = Usage(input_tokens=12_000, output_tokens=300, cache_write_tokens=10_000)
    assert cost_of(short, "claude-sonnet-4-5", "anthropic") == pytest.approx(
        (2_000 * 3 + 10_000 * 3.75 + 300 * 15) / 1e6)  # 0.048, against 0.0705 when long
    assert cost_of(TURNS[0], "claude-sonnet-4-5", "anthropic") == pytest.approx(0.0705)


async def test_the_emulator_bills_one_hour_breakpoints_as_long_writes() -> None:
    replies = [call(Usage()), Reply(message=Message.assistant("Done."))]
    _, seen = await run("anthropic:claude-sonnet-4-5", replies, bill=True)
    first, second = seen
    assert first.cache_write_tokens > 0 and first.cache_write_long_tokens == (
        first.cache_write_tokens)
    assert second.cache_read_tokens == first.cache_write_tokens
    for usage in seen:  # each turn's cost from its own counts, at the published prices
        uncached = usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens
        short = usage.cache_write_tokens - usage.cache_write_long_tokens
        expected = (uncached * 3 + usage.cache_read_tokens * 0.30 + short * 3.75
                    + usage.cache_write_long_tokens * 6 + usage.output_tokens * 15) / 1e6
        assert usage.cost == pytest.approx(expected)


# ---------------------------------------------------------------- the same figure, cheaper


def _table_models() -> list[tuple[str, str]]:
    """Every (model, provider) of the price table whose writes no per-model rule reprices."""
    from genai_prices import data_snapshot

    from toolwire.codecs.model_rules import find

    return [(m.id, p.id) for p in data_snapshot.get_snapshot().providers for m in p.models
            if find("cache_write_price", "*", m.id) is None]


@pytest.mark.parametrize("batch", [False, True])
def test_the_cost_is_what_the_price_tables_own_calculation_says(batch: bool) -> None:
    """cost_of looks a model's rates up once and does the arithmetic itself: for every model
    of the table and prompts on both sides of every tier, the figure is genai-prices' own."""
    import genai_prices

    shapes = [(1_000, 0, 0, 0, 200), (150_000, 90_000, 20_000, 5_000, 3_000),
              (300_000, 100_000, 50_000, 50_000, 9_000), (900_000, 0, 400_000, 0, 1)]
    checked = 0
    for model, provider in _table_models():
        for given, read, write, long, out in shapes:
            usage = Usage(input_tokens=given, output_tokens=out, cache_read_tokens=read,
                          cache_write_tokens=write, cache_write_long_tokens=long)
            counts = {"input_tokens": given, "output_tokens": out, "cache_read_tokens": read,
                      "cache_write_tokens": write, "cache_write_1h_tokens": long}
            try:
                theirs = float(genai_prices.calc_price(
                    genai_prices.Usage(**counts), model, provider_id=provider,
                    price_context={"processing": "batch"} if batch else None).total_price)
            except (LookupError, ValueError):
                continue
            ours = cost_of(usage, model, provider, batch=batch)
            assert ours is not None, (model, provider)
            if batch and not any(v.when.get("processing") == "batch" for v in
                                 genai_prices.data_snapshot.get_snapshot().find_provider_model(
                                     model, None, provider, None)[1].price_variants or ()):
                theirs *= 0.5
            assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12), (model, provider, counts)
            checked += 1
    assert checked > 500
