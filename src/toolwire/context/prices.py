"""The money a reply's usage costs, from the maintained ``genai-prices`` table.

Owns `cost_of`, `with_cost` and `FREE`; which table entry a provider is, is the provider's own
record (`toolwire.http.providers.Provider.prices`). A provider's own reported cost (OpenRouter
sends one) is always preferred: `with_cost` keeps a cost that is already there. Otherwise the
cost is counted from the ``genai-prices`` table's rates as its ``calc_price`` counts it (cache
writes and reads at their own rates, long-context tiers, a price per request), and None when
the table does not know the model; what the table has no rate for (cache writes with the long
lifetime, on some hosts) is priced by the per-model rules (`toolwire.codecs.model_rules`).
``genai_prices`` takes about half a second to import, so it is imported on the first price
asked for, never by ``import toolwire``. Local servers (Ollama, llama.cpp) cost nothing.
Imports only `toolwire.transcript` and the rule table.
"""

from __future__ import annotations

import datetime
import warnings
from functools import lru_cache
from typing import Any, NamedTuple

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
    The table's rates are looked up once per model and provider (`_rates`; at each call for
    the few whose price depends on the time of day); the cost is then plain arithmetic over
    them, counted as ``genai_prices.calc_price`` counts it.
    """
    if provider == FREE:
        return 0.0
    if not usage.input_tokens and not usage.output_tokens:
        return None  # nothing reported: the cost is unknown, not nothing
    rates = _rates(model, provider, batch)
    if rates is None:
        return None
    if rates.timed:  # an off-peak price, say: the rates of this minute
        rates = _rates.__wrapped__(model, provider, batch, datetime.datetime.now(datetime.UTC))
        assert rates is not None
    given = usage.input_tokens
    if rates.flat is not None:  # no tier: the prices whatever the prompt's length
        base, output_rate, read_rate, write_rate, long_rate, request_rate = rates.flat
        base = base or 0.0
    else:
        base = _pick(rates.input, given) or 0.0
        read_rate, write_rate = _pick(rates.read, given), _pick(rates.write, given)
        long_rate, output_rate = _pick(rates.long, given), _pick(rates.output, given)
        request_rate = _pick(rates.request, given)
    if rates.multiplied:  # writes the table has no rate for, at the rule's multiple of input
        write_rate = base * CACHE_WRITE_MULTIPLIER["short"] if write_rate is None else write_rate
        long_rate = base * CACHE_WRITE_MULTIPLIER["long"] if long_rate is None else long_rate
    write_rate = base if write_rate is None else write_rate  # else as the kind they are part of
    long_rate = write_rate if long_rate is None else long_rate
    read, write = usage.cache_read_tokens, usage.cache_write_tokens
    long = min(usage.cache_write_long_tokens, write)
    total = ((given - read - write) * base + read * (base if read_rate is None else read_rate)
             + (write - long) * write_rate + long * long_rate
             + usage.output_tokens * (output_rate or 0.0)) / 1e6
    total += (request_rate or 0.0) / 1e3  # a price per thousand requests
    return total * BATCH_DISCOUNT if rates.discount else total


Rate = tuple[float, tuple[tuple[int, float], ...]] | None
"""A per-million price: its base and its tiers (above so many prompt tokens, this price)."""


class Rates(NamedTuple):
    """One table entry's rates, as plain numbers."""

    input: Rate
    output: Rate
    read: Rate
    write: Rate
    long: Rate
    request: Rate
    multiplied: bool
    """The per-model rules price cache writes the table has no rate for (``cache_write_price``:
    `toolwire.codecs.model_rules`)."""
    discount: bool
    """The batch discount is still to apply (the table has no batch prices of its own)."""
    timed: bool
    """The table's prices for the model depend on when the request is made."""
    flat: tuple[float | None, ...] | None = None
    """When no rate has tiers: the prices of input, output, read, write, long and request,
    which `_pick` would give for any prompt."""


def _rate(price: Any) -> Rate:
    if price is None:
        return None
    tiers = getattr(price, "tiers", None)
    if tiers is None:
        return float(price), ()
    return float(price.base), tuple((int(t.start), float(t.price)) for t in tiers)


def _pick(rate: Rate, input_tokens: int) -> float | None:
    """The price of ``rate`` for a prompt of ``input_tokens`` (None: the table has none)."""
    if rate is None:
        return None
    price, tiers = rate
    for start, tier in tiers:
        if input_tokens > start:
            price = tier
    return price


@lru_cache(maxsize=1024)
def _rates(model: str, provider: str | None, batch: bool,
           when: datetime.datetime | None = None) -> Rates | None:
    """The table's rates for ``model`` at ``provider`` (now, or ``when``), its batch prices
    with ``batch``; None when the table does not know the model."""
    snapshot = _calc().data_snapshot.get_snapshot()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            host, info = snapshot.find_provider_model(model, None, provider, None)
    except (LookupError, ValueError):
        return None
    now = when or datetime.datetime.now(datetime.UTC)
    own = batch and any(info is m for m in host.models)  # as calc_price picks a variant
    table = info.get_prices(now, {"processing": "batch"} if own else None)
    batch_prices = any(v.when.get("processing") == "batch" for v in info.price_variants or ())
    rates = (_rate(table.input_mtok), _rate(table.output_mtok),
             _rate(table.cache_read_mtok), _rate(table.cache_write_mtok),
             _rate(getattr(table, "cache_write_1h_mtok", None)),
             _rate(getattr(table, "requests_kcount", None)))
    flat = None if any(r is not None and r[1] for r in rates) else tuple(
        _pick(r, 0) for r in rates)
    return Rates(*rates, find("cache_write_price", "*", model) is not None,
                 batch and not batch_prices, not isinstance(info.prices, type(table)), flat)


def with_cost(usage: Usage, model: str, provider: str | None = None) -> Usage:
    """``usage`` with its cost: the provider's own when it reported one, else `cost_of`."""
    if usage.cost is not None:
        return usage
    cost = cost_of(usage, model, provider)
    return usage if cost is None else replace(usage, cost=cost)


__all__ = ["BATCH_DISCOUNT", "FREE", "cost_of", "with_cost"]
