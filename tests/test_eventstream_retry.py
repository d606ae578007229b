"""A Bedrock event-stream frame that fails its CRC (prelude or message) was damaged in
transit: a stream error, sent again like a dropped connection, not a bad reply. Real HTTP to
the emulator on loopback."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from toolwire import Agent, Message, Reply, RunStop
from toolwire.codecs import get_codec
from toolwire.emulator import Emulator, Raw
from toolwire.events import RetryEvent
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model

WHOLE = b"".join(get_codec("bedrock-converse").encode_stream(
    Reply(message=Message.assistant("all good"))))


def damaged(at: int) -> Raw:
    data = bytearray(WHOLE)
    data[at] ^= 0x20
    return Raw(chunks=[bytes(data)])


async def run(script: list[object], log: Path) -> tuple[object, list[RetryEvent]]:
    retries: list[RetryEvent] = []
    async with Emulator(script) as emu:
        model = make_model(f"bedrock:m@{emu.base_url}", env={}, seed=3,
                           retry=RetryPolicy(max_attempts=4, base=0.001, max_wait=0.01))
        agent = Agent(model=model, stream=True,
                      on_event=lambda e: retries.append(e) if isinstance(e, RetryEvent) else None)
        try:
            return await agent.arun("hi", log=log), retries
        finally:
            await model.aclose()


@pytest.mark.parametrize("where", ["prelude", "message"])
def test_a_frame_failing_its_crc_is_retried_like_a_dropped_connection(
        where: str, tmp_path: Path) -> None:
    at = 5 if where == "prelude" else len(WHOLE) // 2
    good = Reply(message=Message.assistant("all good"))
    result, retries = asyncio.run(run([damaged(at), damaged(at), good], tmp_path / "run.jsonl"))
    assert result.stop is RunStop.ANSWERED and result.answer == "all good"  # type: ignore[attr-defined]
    assert len(retries) == 2
    assert all("corrupted" in str(r.error) and type(r.error).__name__ == "StreamError"
               for r in retries)


def test_a_stream_corrupted_every_time_ends_as_a_provider_error(tmp_path: Path) -> None:
    result, retries = asyncio.run(run([damaged(5)] * 4, tmp_path / "run.jsonl"))
    assert result.stop is RunStop.PROVIDER_ERROR  # type: ignore[attr-defined]
    assert len(retries) == 3
