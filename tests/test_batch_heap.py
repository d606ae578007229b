"""While a batch runs, the objects made before it are left out of the garbage collector's passes,
and given back to it after: a cycle made before the batch is still collected once it ends."""

from __future__ import annotations

import gc
import json
import weakref
from pathlib import Path
from typing import Any

from toolwire.batch import run_batch
from toolwire.emulator import Emulator
from toolwire.transcript import Message, Reply, Request


class Node:
    def __init__(self) -> None:
        self.me = self


def answer(request: Request, wire: str) -> Reply:
    return Reply(message=Message.assistant(f"done: {request.messages[0].text}"))


async def batch(tmp_path: Path, seen: list[int]) -> list[dict[str, Any]]:
    def tools(task: Any, workdir: Path | None) -> list[Any]:
        seen.append(gc.get_freeze_count())  # made inside each run
        return []

    tasks = [{"id": f"t{i}", "prompt": f"task {i}"} for i in range(3)]
    out = tmp_path / "out.jsonl"
    async with Emulator(answer) as emu:
        await run_batch(tasks, f"openai-compatible:m@{emu.base_url}", out, env={},
                        tools=tools, log=False)
    return [json.loads(x) for x in out.read_text().splitlines()]


async def test_the_heap_before_a_batch_is_set_aside_while_it_runs_and_given_back(
        tmp_path: Path) -> None:
    gc.collect()
    assert gc.get_freeze_count() == 0
    cycle = Node()
    gone = weakref.ref(cycle)
    del cycle  # garbage now, kept alive only by its cycle
    seen: list[int] = []
    results = await batch(tmp_path, seen)
    assert [r["ok"] for r in results] == [True, True, True]
    assert len(seen) == 3 and all(count > 0 for count in seen)  # set aside during the runs
    assert gc.get_freeze_count() == 0  # given back after
    gc.collect()
    assert gone() is None  # and collected as before


async def test_nothing_is_set_aside_with_the_collector_off_or_a_heap_frozen_already(
        tmp_path: Path) -> None:
    seen: list[int] = []
    gc.disable()
    try:
        await batch(tmp_path / "off", seen)
    finally:
        gc.enable()
    assert seen == [0, 0, 0]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        seen.clear()
        await batch(tmp_path / "frozen", seen)
        # another's freeze is left as it was (objects freed meanwhile leave it)
        assert all(0 < count <= frozen for count in seen)
        assert 0 < gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()
