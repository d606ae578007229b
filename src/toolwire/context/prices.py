"""The money a reply's usage costs, from the maintained ``genai-prices`` table.

Owns `cost_of`, `with_cost` and `FREE`; which table entry a provider is, is the provider's
own record (`toolwire.http.providers.Provider.prices`). A provider's own reported cost (OpenRouter
sends one) is always preferred: `with_cost` keeps a cost that is already there. Otherwise the
cost is computed by ``genai_prices.calc_price`` with every token kind it prices (cache writes
and reads at their own rates, long-context tiers), and None when the table does not know the
model; what the table has no rate for (cache writes with the long lifetime, on some hosts) is
priced by the per-model rules (`toolwire.codecs.model_rules`). ``genai_prices`` takes about half a
second to import, so it is imported on the first price asked for, never by ``import toolwire``.
Local servers (Ollama, llama.cpp) cost nothing. Imports only `toolwire.transcript` and the
rule table.
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from typing import Any

from toolwire.codecs.model_rules import CACHE_WRITE_MULTIPLIER, find
from toolwire.transcript import Usage, replace

FREE = ""
"""The price provider of a server that charges nothing (a model running locally)."""


@lru_cache(maxsize=1)
def _calc() -> Any:
    """``genai_prices`` (usage type and calculator), imported once, on first use."""
    import genai_prices

    return genai_prices


BATCH_DISCOUNT = 0.5
"""What a provider's batch API charges of the standard price where the table has no batch
price of its own (OpenAI, Anthropic and Gemini all charge half)."""


def cost_of(usage: Usage, model: str, provider: str | None = None, *,
            batch: bool = False) -> float | None:
    """What ``usage`` costs in US dollars on ``model`` at ``provider`` (its id in the
    ``genai-prices`` table, `FREE` for a local server, None to find the model by name alone),
    or None when the price table does not know the model.

    ``usage.input_tokens`` holds every prompt token, cached ones included, which is how
    ``genai-prices`` counts them too; cache writes and reads are priced at their own rates.
    """
    if provider == FREE:
        return 0.0
    if not usage.input_tokens and not usage.output_tokens:
        return None  # nothing reported: the cost is unknown, not nothing
    prices = _calc()
    counts = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    if usage.cache_read_tokens:
        counts["cache_read_tokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        counts["cache_write_tokens"] = usage.cache_write_tokens
        long = min(usage.cache_write_long_tokens, usage.cache_write_tokens)
        if long:
            counts["cache_write_1h_tokens"] = long
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = prices.calc_price(prices.Usage(**counts), model, provider_id=provider,
                                      price_context={"processing": "batch"} if batch else None)
    except (LookupError, ValueError):
        return None
    total = float(found.total_price) + _unpriced_writes(usage, model, found.model_price)
    if batch and not any(v.when.get("processing") == "batch"
                         for v in getattr(found.model, "price_variants", None) or ()):
        return total * BATCH_DISCOUNT
    return total


def _rate(price: Any, input_tokens: int) -> float | None:
    """A per-million price of the table (a number, or tiers by prompt size) for a prompt of
    ``input_tokens``; None when the table has none."""
    if price is None:
        return None
    tiers = getattr(price, "tiers", None)
    if tiers is None:
        return float(price)
    rate = price.base
    for tier in tiers:
        if input_tokens > tier.start:
            rate = tier.price
    return float(rate)


def _unpriced_writes(usage: Usage, model: str, table: Any) -> float:
    """What the price table leaves out of cache writes, by the per-model rules
    (`toolwire.codecs.model_rules`, ``cache_write_price``): for a model whose writes cost a multiple
    of the input price, the writes the table has no rate for are charged at that multiple
    (the table charged them at its cache-write rate, else at the input rate)."""
    if not usage.cache_write_tokens or find("cache_write_price", "*", model) is None:
        return 0.0
    given = usage.input_tokens
    base = _rate(table.input_mtok, given) or 0.0
    short_rate = _rate(table.cache_write_mtok, given)
    long_rate = _rate(getattr(table, "cache_write_1h_mtok", None), given)
    long = min(usage.cache_write_long_tokens, usage.cache_write_tokens)
    extra = 0.0
    if short_rate is None:  # every write was charged as input
        extra += usage.cache_write_tokens * base * (CACHE_WRITE_MULTIPLIER["short"] - 1)
        short_rate = base * CACHE_WRITE_MULTIPLIER["short"]
    if long and long_rate is None:  # the long writes were charged at the short rate
        extra += long * (base * CACHE_WRITE_MULTIPLIER["long"] - short_rate)
    return extra / 1e6


def with_cost(usage: Usage, model: str, provider: str | None = None) -> Usage:
    """``usage`` with its cost: the provider's own when it reported one, else `cost_of`."""
    if usage.cost is not None:
        return usage
    cost = cost_of(usage, model, provider)
    return usage if cost is None else replace(usage, cost=cost)


__all__ = ["BATCH_DISCOUNT", "FREE", "cost_of", "with_cost"]
