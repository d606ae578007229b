"""An MCP server that floods a run with progress reports: the run log keeps at most a line per
tool per second, each counting the reports it stands for, and the last report is kept. Real
processes: ``toolwire run``, the server it starts, and the emulator over loopback."""

from __future__ import annotations

import json
from pathlib import Path

from mcp_runs import run_with_features
from toolwire.agent.pacing import ProgressPacer
from toolwire.emulator import Emulator
from toolwire.events import RunStopped, ToolProgress
from toolwire.transcript import Usage

STEPS = 10_000


def test_a_progress_flood_is_a_line_a_second_in_the_run_log(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    script = [{"tool_calls": [{"id": "c1", "name": "work", "arguments": {"steps": STEPS}}]},
              {"text": "Done."}]
    with Emulator(script) as emu:
        proc = run_with_features(emu, tmp_path, log, "auto")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    progress = [e for e in lines if e["event"] == "progress"]
    assert 1 <= len(progress) < 100
    assert sum(e["count"] for e in progress) == STEPS
    assert progress[-1]["progress"] == STEPS  # the last report is kept


def test_the_pacer_passes_one_report_a_second_and_counts_the_rest() -> None:
    seen: list[object] = []
    now = [0.0]
    pacer = ProgressPacer(seen.append, clock=lambda: now[0])
    for step in range(1, 11):
        now[0] = step * 0.25
        pacer(ToolProgress("work", step, 10))
    pacer(ToolProgress("other", 1))
    stop = RunStopped(stop="answered", turns=1, usage=Usage(), notes=())
    pacer(stop)
    shown = [(e.tool, e.progress, e.count) for e in seen if isinstance(e, ToolProgress)]
    assert shown == [("work", 1, 1), ("work", 5, 4), ("work", 9, 4), ("other", 1, 1),
                     ("work", 10, 1)]
    assert seen[-1] is stop
