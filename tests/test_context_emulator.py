"""The emulator's prompt cache and context windows, over loopback HTTP, in every wire."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from toolwire import Agent, Cache, ContextLengthError, Message, Reply, Request, ToolCallPart
from toolwire.codecs import get_codec
from toolwire.codecs.prompt_rules import CacheRules
from toolwire.codecs.registry import get_wire
from toolwire.emulator import Emulator
from toolwire.emulator.billing import Billing, ContextTooLong, TooManyBreakpoints, prompt_tokens
from toolwire.events import ReplyReceived
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.schema.tool import Tool
from wire_data import looped, table

MODELS = table("MODEL_ID")
CACHES = {wire for wire, caches in table("CACHES_PROMPTS").items() if caches}

SYSTEM = "You are a careful assistant. " + " ".join(
    f"Rule {n}: read every file before changing it, and say what you changed." for n in range(80))
ECHO = Tool(name="echo", description="Echo text back.",
            input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
            fn=lambda text: text * 20)


def calls(turns: int) -> list[Reply]:
    return [Reply(message=Message(role="assistant", parts=(
        ToolCallPart(id=f"c{k}", name="echo", arguments={"text": f"line {k} "}),)),
        stop="tool_calls") for k in range(turns)] + [Reply(message=Message.assistant("Done."))]


async def usage_per_turn(wire: str, *, cache: bool = True, turns: int = 4) -> list[Any]:
    seen: list[Any] = []

    def on_event(event: object) -> None:
        if isinstance(event, ReplyReceived):
            seen.append(event.reply.usage)

    async with Emulator(calls(turns), bill=True) as emu:
        model = make_model(f"{MODELS[wire]}@{emu.base_url}", env={})
        result = await Agent(model=model, tools=[ECHO], system=SYSTEM, cache=cache,
                             on_event=on_event).arun("Go.")
        await model.aclose()
    assert result.ok
    return seen


@pytest.mark.parametrize("wire", looped())
async def test_cache_reads_from_the_second_turn_on_where_the_wire_caches(wire: str) -> None:
    usage = await usage_per_turn(wire)
    assert len(usage) == 5
    assert usage[0].cache_read_tokens == 0
    assert all(u.input_tokens > 1_024 for u in usage)
    if wire in CACHES:
        assert all(u.cache_read_tokens > 0 for u in usage[1:])
        assert all(u.cache_read_tokens <= u.input_tokens for u in usage)
    else:
        assert all(u.cache_read_tokens == 0 for u in usage)
    if wire == "anthropic-messages":  # writes are billed where breakpoints are
        assert usage[0].cache_write_tokens == usage[0].input_tokens
        later = usage[1:]
        assert all(u.cache_read_tokens + u.cache_write_tokens == u.input_tokens for u in later)
    assert all(u.cost is not None for u in usage)


async def test_anthropic_caches_nothing_without_breakpoints() -> None:
    usage = await usage_per_turn("anthropic-messages", cache=False)
    assert all(u.cache_read_tokens == u.cache_write_tokens == 0 for u in usage)


async def test_caching_makes_a_run_cheaper() -> None:
    cached = await usage_per_turn("anthropic-messages", turns=8)
    plain = await usage_per_turn("anthropic-messages", cache=False, turns=8)
    sent, plain_sent = sum(u.input_tokens for u in cached), sum(u.input_tokens for u in plain)
    assert abs(sent - plain_sent) < 0.02 * plain_sent  # the same prompt, give or take markers
    assert sum(u.cost for u in cached) < 0.5 * sum(u.cost for u in plain)


# --------------------------------------------------------------------------- the rules modelled

ANTHROPIC = get_wire("anthropic-messages")


def body(blocks: int, marks: list[int], ttl: str | None = None) -> dict[str, Any]:
    """An Anthropic body: one user message of ``blocks`` text blocks, marked at ``marks``."""
    marker: dict[str, Any] = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    content = [{"type": "text", "text": f"block {n} " + "x" * 400,
                **({"cache_control": marker} if n in marks else {})} for n in range(blocks)]
    return {"model": "claude-sonnet-4-5", "max_tokens": 10,
            "messages": [{"role": "user", "content": content}]}


def test_more_than_four_breakpoints_are_refused() -> None:
    with pytest.raises(TooManyBreakpoints, match="A maximum of 4 blocks with cache_control"):
        Billing().count(ANTHROPIC, body(10, [1, 2, 3, 4, 5]), "claude-sonnet-4-5")


def test_a_breakpoint_looks_back_only_twenty_blocks() -> None:
    billing = Billing()
    first = billing.count(ANTHROPIC, body(20, [19]), "claude-sonnet-4-5")
    assert first.cache_write > 0 and first.cache_read == 0
    near = billing.count(ANTHROPIC, body(35, [34]), "claude-sonnet-4-5")
    assert near.cache_read == first.tokens  # 15 blocks back: found
    far = Billing()
    far.count(ANTHROPIC, body(20, [19]), "claude-sonnet-4-5")
    assert far.count(ANTHROPIC, body(60, [59]), "claude-sonnet-4-5").cache_read == 0
    # a second breakpoint where the last request ended finds it however far the end moved
    marked = Billing()
    marked.count(ANTHROPIC, body(20, [19]), "claude-sonnet-4-5")
    both = marked.count(ANTHROPIC, body(60, [19, 59]), "claude-sonnet-4-5")
    assert both.cache_read == first.tokens
    assert both.cache_write == both.tokens - first.tokens


def test_entries_expire_after_their_ttl_and_reads_renew_them() -> None:
    now = [0.0]
    billing = Billing(clock=lambda: now[0])
    billing.count(ANTHROPIC, body(10, [9]), "claude-sonnet-4-5")
    billing.count(ANTHROPIC, body(10, [9], ttl="1h"), "claude-sonnet-4-6")
    now[0] = 250.0
    assert billing.count(ANTHROPIC, body(10, [9]), "claude-sonnet-4-5").cache_read > 0
    now[0] = 500.0  # 250 s after the read that renewed it
    assert billing.count(ANTHROPIC, body(10, [9]), "claude-sonnet-4-5").cache_read > 0
    now[0] = 900.0
    assert billing.count(ANTHROPIC, body(10, [9]), "claude-sonnet-4-5").cache_read == 0
    assert billing.count(ANTHROPIC, body(10, [9], ttl="1h"), "claude-sonnet-4-6").cache_read > 0


def test_short_prefixes_are_not_cached() -> None:
    billing = Billing()
    short = body(2, [1])  # about 200 tokens, under Claude Sonnet 4.5's 1024
    billing.count(ANTHROPIC, short, "claude-sonnet-4-5")
    again = billing.count(ANTHROPIC, short, "claude-sonnet-4-5")
    assert again.cache_read == again.cache_write == 0


# --------------------------------------------------------------------------- the window


def test_a_wire_that_names_no_prompt_sections_is_billed_for_every_list_it_sends() -> None:
    """The prompt of a record with no cache sections is the body's lists, whatever the field
    holding the conversation is called: it is counted, and refused past the window."""
    wire = dataclasses.replace(get_wire("openai-chat"), name="turns-wire", cache=CacheRules())
    body = {"model": "small", "turns": [{"role": "user", "content": "word " * 2_000}],
            "tools": [{"name": "f"}], "max_tokens": 50}
    tokens = prompt_tokens(wire, body)
    assert tokens > 2_000
    assert prompt_tokens(wire, {**body, "tools": []}) < tokens  # the tools are its prompt too
    with pytest.raises(ContextTooLong):
        Billing({"small": 1_000}).count(wire, body, "small")


@pytest.mark.parametrize("wire", looped())
async def test_a_prompt_over_the_window_gets_the_providers_own_error(wire: str) -> None:
    request = Request(model="small", messages=(Message.user("word " * 2_000),), max_tokens=50)
    async with Emulator([Reply(message=Message.assistant("fits"))], bill=True,
                        windows={"small": 1_000}) as emu:
        provider = MODELS[wire].split(":")[0]
        model = make_model(f"{provider}:small@{emu.base_url}", env={},
                           retry=RetryPolicy(base=0.001))
        if wire == "ollama-chat":  # no error: the prompt is cut to the context silently
            reply = await model.complete(request)
            assert reply.usage.input_tokens == 4_096 or reply.usage.input_tokens < 2_600
        else:
            with pytest.raises(ContextLengthError) as caught:
                await model.complete(request)
            assert caught.value.status == 400 and not caught.value.retryable
        await model.aclose()
    decoded = get_codec(wire).decode_error(
        400, get_codec(wire).encode_error(400, get_wire(wire).context_error.format(
            tokens=2_500, limit=1_000)), {})
    assert isinstance(decoded, ContextLengthError)


async def test_cache_keys_keep_caches_apart() -> None:
    first = await _two_requests(Cache(key="a"), Cache(key="a"))
    other = await _two_requests(Cache(key="a"), Cache(key="b"))
    assert first > 0 and other == 0


async def _two_requests(one: Cache, two: Cache) -> int:
    async with Emulator([Reply(message=Message.assistant("ok"))] * 2, bill=True) as emu:
        model = make_model(f"openai:gpt-4o@{emu.base_url}", env={})
        base = Request(model="gpt-4o", system=SYSTEM, messages=(Message.user("Hi."),))
        await model.complete(Request(**{**_fields(base), "cache": one}))
        reply = await model.complete(Request(**{**_fields(base), "cache": two}))
        await model.aclose()
    return reply.usage.cache_read_tokens


def _fields(request: Request) -> dict[str, Any]:
    return {f: getattr(request, f) for f in request.__struct_fields__}


# --------------------------------------------------------------------------- counting


@pytest.mark.parametrize("wire", ["anthropic-messages", "openai-responses", "gemini-generate"])
async def test_count_tokens_asks_the_providers_counting_endpoint(wire: str) -> None:
    request = Request(model="x", system=SYSTEM, messages=(Message.user("How long is this?"),),
                      tools=(ECHO.spec,))
    async with Emulator([], bill=True) as emu:
        model = make_model(f"{MODELS[wire]}@{emu.base_url}", env={})
        counted = await model.count_tokens(request)
        await model.aclose()
    assert [r.path.rsplit("/", 1)[-1] for r in emu.received] == [
        {"anthropic-messages": "count_tokens", "openai-responses": "input_tokens",
         "gemini-generate": "gemini-2.5-flash:countTokens"}[wire]]
    from toolwire.context.estimate import estimate_tokens

    assert 0.5 * estimate_tokens(request) < counted < 2 * estimate_tokens(request)


async def test_count_tokens_estimates_locally_where_there_is_no_endpoint() -> None:
    from toolwire.context.estimate import estimate_tokens

    request = Request(model="x", system=SYSTEM, messages=(Message.user("Hi."),))
    async with Emulator([], bill=True) as emu:
        model = make_model(f"openai:gpt-4o@{emu.base_url}", env={})
        assert await model.count_tokens(request) == estimate_tokens(request)
        await model.aclose()
    assert emu.received == []


def recorded_replies() -> list[tuple[str, Reply]]:
    """The recorded replies of tests/fixtures/corpus, decoded (bench/prompt_counts.py reads
    them the same way to build its requests)."""
    import importlib.util
    from pathlib import Path

    where = Path(__file__).resolve().parent.parent / "bench" / "prompt_counts.py"
    spec = importlib.util.spec_from_file_location("prompt_counts", where)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    found: list[tuple[str, Reply]] = bench.replies()
    return found


def test_the_local_estimate_against_the_recorded_provider_counts() -> None:
    """The estimate of each recorded reply's visible output (text, calls) against the output
    tokens its provider counted (hidden reasoning left out): median and worst relative error,
    as docs/context.md reports them."""
    import statistics

    from toolwire.context.estimate import PER_MESSAGE, estimate_messages

    errors = []
    for _, reply in recorded_replies():
        visible = reply.usage.output_tokens - reply.usage.reasoning_tokens
        if visible > 0:
            estimate = estimate_messages([reply.message]) - PER_MESSAGE
            errors.append(abs(estimate - visible) / visible)
    assert len(errors) >= 60
    assert statistics.median(errors) < 0.30  # measured: 0.27
    assert max(errors) < 8.0  # measured: 7.3 (a server tool's block, not output tokens)


def test_the_local_estimate_against_a_real_servers_prompt_counts() -> None:
    """The estimate of whole requests (built from the recorded replies by
    bench/prompt_counts.py) against the prompt tokens llama.cpp's server counted for them with
    SmolLM2's tokenizer: for the whole prompt, and for the conversation alone (each count less
    the count of the same request holding a one-word task), as docs/context.md reports."""
    import json
    import statistics
    from pathlib import Path

    from toolwire.context.estimate import estimate_tokens
    from toolwire.transcript import replace
    from toolwire.transcript_json import from_json

    data = json.loads((Path(__file__).parent / "fixtures" / "prompt_counts.json").read_text())
    whole, talk = [], []
    for pair in data["pairs"]:
        request = from_json(pair["request"])
        assert isinstance(request, Request)
        counted, framing = pair["prompt_tokens"], pair["baseline_tokens"]
        estimate = estimate_tokens(request)
        whole.append((estimate - counted) / counted)
        framed = estimate_tokens(replace(request, messages=(Message.user("Hi."),)))
        talk.append((estimate - framed - (counted - framing)) / (counted - framing))
    assert len(whole) == 63
    # measured: whole prompt 58% under at the median (the chat template's tool instructions
    # and example are ~190 tokens the estimate does not know), 68% at worst; the
    # conversation alone 32% under at the median, 43% at worst
    assert 0.5 < -statistics.median(whole) < 0.62 and max(map(abs, whole)) < 0.7
    assert 0.25 < -statistics.median(talk) < 0.35 and max(map(abs, talk)) < 0.45
