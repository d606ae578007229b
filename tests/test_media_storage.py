"""Media kept once per run: the run log and a recorded cassette keep each image once, by content
hash, in a folder next to them, and resume and replay give the same bytes back."""

from __future__ import annotations

import base64
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from media_files import screenshot
from toolwire import Agent, Image, MediaPart, Message, Reply, RunStop, ToolCallPart, Usage
from toolwire.agent.runlog import LOG_FORMAT, read_log
from toolwire.emulator import Emulator
from toolwire.errors import TranscriptError
from toolwire.events import RequestSent
from toolwire.http.cassette import CassetteMismatch, RecordTransport, ReplayTransport
from toolwire.http.client import model as make_model
from toolwire.http.transport import HttpTransport
from toolwire.mediafiles import INLINE_MAX
from toolwire.schema.tool import Tool

MB = 1 << 20
TURNS = 20


def calls(turns: int) -> list[Any]:
    return [Reply(message=Message(role="assistant", parts=(
        ToolCallPart(id=f"call_{n}", name="screenshot", arguments={"n": n}),)),
        stop="tool_calls", usage=Usage(input_tokens=10, output_tokens=5))
        for n in range(turns)]


def shot_tool(size: int, seed: int = 0) -> Tool:
    def screenshot_of(n: int) -> MediaPart:
        return Image.from_bytes(screenshot(seed + n, size))

    return Tool(name="screenshot", description="Take a screenshot of the screen.",
                input_schema={"type": "object", "properties": {"n": {"type": "integer"}},
                              "required": ["n"]}, fn=screenshot_of)


def size_of(path: Path) -> int:
    """A file's size plus everything in its media folder."""
    folder = Path(f"{path}.media")
    kept = sum(f.stat().st_size for f in folder.iterdir()) if folder.exists() else 0
    return (path.stat().st_size if path.exists() else 0) + kept


def growth(sizes: list[int]) -> list[int]:
    return [b - a for a, b in itertools.pairwise(sizes)]


async def test_twenty_screenshots_grow_log_and_cassette_by_one_image_each_and_resume_restores(
        tmp_path: Path) -> None:
    log, cassette = tmp_path / "run.jsonl", tmp_path / "run.cassette.json"
    shots = [screenshot(n, MB) for n in range(TURNS)]
    log_sizes: list[int] = []
    tape_sizes: list[int] = []

    def measure(event: object) -> None:
        if isinstance(event, RequestSent):  # before each request: the turns before it, written
            log_sizes.append(size_of(log))
            tape_sizes.append(size_of(cassette))

    async with Emulator(calls(TURNS)) as emu:
        model = make_model(f"anthropic:m@{emu.base_url}", env={},
                           transport=RecordTransport(cassette, HttpTransport()))
        agent = Agent(model=model, tools=[shot_tool(MB)], max_turns=TURNS, compaction=None,
                      on_event=measure)
        first = await agent.arun("Watch the screen.", log=log)
        await model.aclose()
        last_request = emu.received[-1].body
    assert first.stop == RunStop.TURN_LIMIT
    log_sizes.append(size_of(log))
    # Each turn adds one image of about 1 MB, not the whole history again.
    for added in growth(log_sizes)[1:] + growth(tape_sizes)[1:-1]:
        assert MB <= added <= MB + 40_000, (log_sizes, tape_sizes)
    assert size_of(log) < TURNS * MB + 200_000
    assert log.stat().st_size < 100_000  # the lines name the files, never hold the base64
    assert size_of(cassette) < TURNS * MB + 400_000
    assert cassette.stat().st_size < 300_000
    assert sorted(p.read_bytes() for p in Path(f"{log}.media").iterdir()) == sorted(shots)
    assert json.loads(log.read_text().split("\n", 1)[0])["format"] == LOG_FORMAT == 10
    # The requests themselves carried every image (19 before the last turn's).
    sent = [b["content"][0]["source"]["data"] for m in last_request["messages"]
            if m["role"] == "user" for b in m["content"]
            if b.get("type") == "tool_result" and isinstance(b.get("content"), list)]
    assert sent == [base64.b64encode(s).decode() for s in shots[:-1]]

    logged = read_log(log)
    kept = [r.media[0].data for m in logged.messages for r in m.tool_results]
    assert kept == shots

    async with Emulator([{"text": "Done watching."}]) as emu:
        model = make_model(f"anthropic:m@{emu.base_url}", env={})
        agent = Agent(model=model, tools=[shot_tool(MB)], compaction=None)
        resumed = await agent.aresume(log)
        await model.aclose()
        body = emu.received[0].body
    assert resumed.stop == RunStop.ANSWERED
    again = [b["content"][0]["source"]["data"] for m in body["messages"] if m["role"] == "user"
             for b in m["content"]
             if b.get("type") == "tool_result" and isinstance(b.get("content"), list)]
    assert [base64.b64decode(d) for d in again] == shots


async def test_a_replay_compares_and_answers_with_the_media_put_back(tmp_path: Path) -> None:
    cassette = tmp_path / "small.json"
    size = 20_000

    async def run(transport: Any) -> Any:
        model = make_model("anthropic:m@http://127.0.0.1:9", env={}, transport=transport)
        agent = Agent(model=model, tools=[shot_tool(size)], max_turns=3, compaction=None)
        result = await agent.arun("Watch.")
        await model.aclose()
        return result

    async with Emulator(calls(3)) as emu:
        model = make_model(f"anthropic:m@{emu.base_url}", env={},
                           transport=RecordTransport(cassette, HttpTransport()))
        agent = Agent(model=model, tools=[shot_tool(size)], max_turns=3, compaction=None)
        recorded = await agent.arun("Watch.")
        await model.aclose()
    data = json.loads(cassette.read_text())
    assert data["toolwire_cassette"] == 2
    assert [i["request"].get("media", False) for i in data["interactions"]] == [
        False, True, True]
    assert len(list(Path(f"{cassette}.media").iterdir())) == 2  # two images, each kept once
    replayed = await run(ReplayTransport(cassette))
    assert replayed.messages == recorded.messages
    # A tool that now returns other bytes is a mismatch naming the file it should have been.
    other = shot_tool(size, seed=100)
    model = make_model("anthropic:m@http://127.0.0.1:9", env={},
                       transport=ReplayTransport(cassette, strict=False))
    with pytest.raises(CassetteMismatch, match="toolwire_media"):
        await Agent(model=model, tools=[other], max_turns=3, compaction=None).arun("Watch.")
    await model.aclose()


def test_small_media_stay_inline_and_a_missing_or_changed_file_is_named(tmp_path: Path) -> None:
    from toolwire.agent.runlog import RunLog

    small, big = Image.from_bytes(screenshot(1, 500)), Image.from_bytes(screenshot(2, 9000))
    assert small.size <= INLINE_MAX < big.size
    path = tmp_path / "r.jsonl"
    with RunLog(path) as log:
        log.header(model="m", system=None, tools=())
        log.message(0, Message(role="user", parts=(small, big)))
        log.message(1, Message(role="assistant", parts=(big,)))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    first, second = (line["message"]["parts"] for line in lines[1:])
    assert "data" in first[0] and "file" not in first[0]
    assert first[1]["file"] == second[0]["file"] and first[1]["size"] == big.size
    assert read_log(path).messages[0].parts == (small, big)
    kept = Path(f"{path}.media") / first[1]["file"]
    kept.write_bytes(b"changed")
    with pytest.raises(TranscriptError, match="was changed: its bytes no longer match"):
        read_log(path)
    kept.unlink()
    with pytest.raises(TranscriptError, match=r"r\.jsonl:2: the media file .* cannot be read"):
        read_log(path)
    hostile = path.read_text().replace(first[1]["file"], "../../etc/passwd")
    path.write_text(hostile)
    with pytest.raises(TranscriptError, match="is not a media file name"):
        read_log(path)
