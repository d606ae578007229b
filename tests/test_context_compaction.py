"""Compaction: a long run stays under the model's window, never separating a call from its
result, over loopback HTTP against the emulator and with scripted models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire import Agent, Message, Reply, RunStop, ToolCallPart, ToolResultPart, Usage
from toolwire.agent.compaction import (
    Compaction,
    clear_results,
    drop_turns,
    unpaired,
)
from toolwire.agent.runlog import read_log
from toolwire.emulator import Emulator
from toolwire.events import Compacted, ReplyReceived
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.http.providers import provider_for
from toolwire.rules import check_transcript
from toolwire.schema.tool import Tool
from toolwire.testing import ScriptedModel, call, reply
from wire_data import looped, table


def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}\n" + "".join(f"line {n}: some code here\n" for n in range(120))


READ = Tool.from_function(read_file)


def reads(turns: int) -> list[Reply]:
    return [Reply(message=Message(role="assistant", parts=(
        ToolCallPart(id=f"r{k}", name="read_file", arguments={"path": f"src/f{k}.py"}),)),
        stop="tool_calls") for k in range(turns)] + [Reply(message=Message.assistant("Done."))]


async def run(wire: str, script: list[Reply], *, log: Path | None = None,
              **agent: Any) -> tuple[Any, list[Any], Emulator]:
    events: list[Any] = []
    windows = agent.pop("windows", {})
    model_name = agent.pop("model_name", "m")
    async with Emulator(script, bill=True, windows=windows) as emu:
        model = make_model(f"{provider_for(wire)}:{model_name}@{emu.base_url}", env={},
                           retry=RetryPolicy(base=0.001))
        result = await Agent(model=model, tools=[READ], on_event=events.append,
                             **agent).arun("Read the files.", log=log)
        await model.aclose()
    return result, events, emu


def next_read(turns: int) -> Any:
    """A script as a function: the next read after the latest one in the request (a refused
    or cut request is answered again the same way), then the answer."""
    def answer(request: Any, wire: str) -> Reply:
        done = [c.id for m in request.messages if m.role == "assistant" for c in m.tool_calls]
        k = int(done[-1][1:]) + 1 if done else 0
        return reads(turns)[min(k, turns)]
    return answer


# --------------------------------------------------------------------------- at the threshold


async def test_a_long_run_stays_under_the_window_by_clearing_old_results(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    result, events, _ = await run("anthropic-messages", reads(12), log=log,
                                  model_name="claude-sonnet-4-5", context_window=6_000,
                                  windows={"claude-sonnet-4-5": 6_000})
    assert result.stop is RunStop.ANSWERED and result.turns == 13
    compactions = [e for e in events if isinstance(e, Compacted)]
    assert compactions and all(c.how == "clear" and c.after < c.before for c in compactions)
    prompts = [e.reply.usage.input_tokens for e in events if isinstance(e, ReplyReceived)]
    assert max(prompts) <= 6_000
    for c in compactions:
        assert check_transcript(c.messages, "anthropic-messages") == []
    stubs = [p.content for m in result.messages for p in m.parts if type(p) is ToolResultPart
             and p.content.startswith("[cleared")]
    assert stubs and "Call read_file again with the same arguments" in stubs[0]
    assert any("the context was compacted (clear)" in n for n in result.notes)
    logged = read_log(log)
    assert logged.messages == list(result.messages)  # the log holds the compacted history


async def test_resume_goes_on_from_the_compacted_history(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    script = reads(8)
    cut = [*script[:6], Reply(message=Message(role="assistant", parts=(
        ToolCallPart(id="last", name="read_file", arguments={"path": "x"}),)), stop="tool_calls")]
    async with Emulator(cut, bill=True, windows={"claude-sonnet-4-5": 5_000}) as emu:
        model = make_model(f"anthropic:claude-sonnet-4-5@{emu.base_url}", env={})
        agent = Agent(model=model, tools=[READ], context_window=5_000, max_turns=7)
        first = await agent.arun("Read the files.", log=log)
        await model.aclose()
    assert first.stop is RunStop.TURN_LIMIT
    assert any(line for line in log.read_text().splitlines() if '"event":"compact"' in line)
    history = read_log(log).messages
    async with Emulator([Reply(message=Message.assistant("Done."))], bill=True) as emu:
        model = make_model(f"anthropic:claude-sonnet-4-5@{emu.base_url}", env={})
        resumed = await Agent(model=model, tools=[READ], context_window=5_000).aresume(log)
        await model.aclose()
        sent = emu.received[0].body["messages"]
    assert resumed.stop is RunStop.ANSWERED
    assert len(sent) == len(history)  # the request went on from the compacted history
    assert check_transcript(resumed.messages, "anthropic-messages") == []


# --------------------------------------------------------------------------- the provider says


@pytest.mark.parametrize("wire", looped())
async def test_context_too_long_compacts_and_retries_the_turn(wire: str) -> None:
    # no window is known for model "m": only the provider's error (Ollama: a prompt cut at
    # its default num_ctx of 4096) says the context is full
    result, events, emu = await run(wire, next_read(6), windows={"m": 4_000})
    assert result.stop is RunStop.ANSWERED, (result.stop, result.error, result.notes)
    compactions = [e for e in events if isinstance(e, Compacted)]
    assert compactions and "the provider said" in compactions[0].why
    assert check_transcript(result.messages, wire) == []
    replies = [e for e in events if isinstance(e, ReplyReceived)]
    assert len(emu.received) > len(replies)  # the refused request was sent again, smaller


async def test_without_compaction_the_run_stops_with_context_full() -> None:
    result, _, _ = await run("openai-chat", reads(6), windows={"m": 4_000}, compaction=None)
    assert result.stop is RunStop.CONTEXT_FULL


# --------------------------------------------------------------------------- other strategies


def usage(tokens: int) -> Usage:
    return Usage(input_tokens=tokens, output_tokens=10)


def long_calls(n: int) -> list[Reply]:
    return [reply(call("read_file", {"path": f"f{k}"}, id=f"c{k}"), usage=usage(800 * (k + 1)))
            for k in range(n)]


async def test_summarize_asks_the_model_and_keeps_the_summary_first() -> None:
    model = ScriptedModel([*long_calls(4), reply("The files f0 to f2 hold code."),
                           reply("Done.", usage=usage(900))], name="scripted")
    result = await Agent(model=model, tools=[READ], context_window=4_500,
                         compaction="summarize").arun("Read the files.")
    model.assert_done()
    assert result.stop is RunStop.ANSWERED
    first = result.messages[0]
    assert first.parts[0].text == "Read the files."  # type: ignore[union-attr]
    assert "A summary of" in first.text and "The files f0 to f2 hold code." in first.text
    assert check_transcript(result.messages) == []
    assert result.usage.output_tokens > 0


async def test_a_function_of_your_own_compacts() -> None:
    seen: list[int] = []

    def mine(messages: list[Message]) -> list[Message]:
        seen.append(len(messages))
        return clear_results(messages, keep=0)[0]

    model = ScriptedModel([*long_calls(4), reply("Done.", usage=usage(500))])
    result = await Agent(model=model, tools=[READ], context_window=4_500,
                         compaction=Compaction(strategy=mine, threshold=0.7)).arun("Go.")
    assert result.stop is RunStop.ANSWERED and seen
    assert all(p.content.startswith("[cleared") for p in result.messages[2].tool_results)


# --------------------------------------------------------------------------- pairs stay whole


@st.composite
def transcripts(draw: st.DrawFn) -> list[Message]:
    messages = [Message.user("task")]
    for turn in range(draw(st.integers(0, 8))):
        calls = draw(st.integers(0, 3))
        parts: list[Any] = [ToolCallPart(id=f"t{turn}c{n}", name="read_file", arguments={})
                            for n in range(calls)]
        messages.append(Message(role="assistant", parts=(*parts,) or (
            Message.assistant("thinking aloud").parts)))
        if calls:
            messages.append(Message(role="tool", parts=tuple(
                ToolResultPart(call_id=f"t{turn}c{n}", name="read_file", content="x" * 300)
                for n in range(calls))))
        else:
            messages.append(Message.user("go on"))
    return messages


@settings(max_examples=150, deadline=None)
@given(transcripts(), st.integers(1, 30), st.integers(0, 3))
def test_compaction_never_separates_a_call_from_its_result(messages: list[Message], room: int,
                                                           keep: int) -> None:
    cleared, _ = clear_results(messages, keep)
    kept = drop_turns(cleared, lambda m: len(m) <= room)
    assert unpaired(kept) is None
    assert check_transcript(kept) == check_transcript(messages) == []
    assert kept[0].parts[0] == messages[0].parts[0]
    if len(messages) > 2:
        assert kept[-2:] == cleared[-2:]  # the latest turn stays as it was


# ---------------------------------------------------------------- media


def test_media_count_as_each_wire_bills_them_not_by_their_bytes() -> None:
    from media_files import pdf, png, screenshot
    from toolwire import Document, Image
    from toolwire.codecs import get_codec
    from toolwire.context.estimate import IMAGE_UNKNOWN, estimate_messages, media_tokens

    def rule(wire: str) -> str | None:
        return get_codec(wire).MEDIA_TOKENS

    square = Image.from_bytes(png(1000, 1000))
    assert {wire: media_tokens(square, rule(wire)) for wire in looped()} == table(
        "IMAGE_TOKENS")
    assert media_tokens(square) == 1334  # no rule: Anthropic's
    assert media_tokens(Image.from_bytes(png(4000, 3000))) == 1534  # fitted to 1.15 megapixels
    assert media_tokens(Image.from_bytes(png(300, 200)), rule("gemini-generate")) == 258
    assert media_tokens(Image.from_url("https://x.test/a.png"), rule("openai-chat")) == 765
    assert IMAGE_UNKNOWN[rule("openai-chat")] == 765
    assert media_tokens(Document.from_bytes(pdf("one page"))) == 2000
    assert media_tokens(Document.from_bytes(pdf()), rule("gemini-generate")) == 258
    # A 1 MB screenshot in a tool result costs what its pixels cost, in a user message too.
    shot = Image.from_bytes(screenshot(0))
    result = Message(role="tool", parts=(ToolResultPart(call_id="c", content=(shot,)),))
    user = Message(role="user", parts=(shot,))
    text_only = Message(role="tool", parts=(ToolResultPart(call_id="c", content=()),))
    assert estimate_messages([result]) - estimate_messages([text_only]) == 468  # 592 x 592 / 750
    assert estimate_messages([user]) == 468 + 4


async def test_clearing_old_results_clears_their_media_too() -> None:
    from media_files import png
    from toolwire import Image

    def look(n: int) -> Any:
        """Take a screenshot."""
        return ["the screen:", Image.from_bytes(png(1000, 1000, rgb=(n, n, n)))]

    turns = [reply(call("look", {"n": k}, id=f"c{k}")) for k in range(6)]
    model = ScriptedModel([*turns, reply("Done.")])
    agent = Agent(model=model, tools=[Tool.from_function(look)], context_window=5_000,
                  compaction=Compaction(keep=1))
    result = await agent.arun("Watch the screen.")
    assert result.stop == RunStop.ANSWERED
    assert any("the context was compacted (clear)" in n for n in result.notes)
    results = [r for m in result.messages for r in m.tool_results]
    assert results[-1].media and not results[0].media and not results[1].media
    assert results[0].content == (
        "[cleared to keep the context small: the result of look was here (11 characters and an "
        f"image (image/png, {len(png(1000, 1000, rgb=(0, 0, 0)))} bytes)). Call look again with "
        "the same "
        "arguments to get it back.]")
    sent = [sum(len(r.media) for m in q.messages for r in m.tool_results)
            for q in model.requests]  # images per request: never all six, never over the window
    assert sent == [0, 1, 2, 1, 2, 1, 2]
