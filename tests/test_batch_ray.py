"""A batch on a local Ray instance: each run a Ray task, results in the same file with the same
resume rule, and one backoff shared across the worker processes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from otlp_collector import Collector
from test_batch import ENV, lines, model_id, prompt_of, scripted, toolwire, write_tasks
from toolwire.emulator import Emulator, Fault
from toolwire.emulator.script import ScriptReply
from toolwire.transcript import Request


def test_a_ray_batch_appends_to_the_same_results_and_shares_one_backoff(tmp_path: Path) -> None:
    retry_after = 1.0
    arrivals: list[tuple[float, str]] = []
    limited: list[float] = []

    def responder(request: Request, wire: str) -> ScriptReply | Fault:
        now = time.monotonic()
        arrivals.append((now, prompt_of(request)))
        if not limited:
            limited.append(now)
            return Fault("rate_limit", retry_after=retry_after)
        return ScriptReply(scripted(request, calls=2), delay=0.05)

    tasks = write_tasks(tmp_path / "tasks.jsonl", 5, tools=["list_files"])
    out = tmp_path / "out.jsonl"
    earlier = {"id": "t0", "stop": "answered", "ok": True, "answer": "from before"}
    out.write_text(json.dumps(earlier) + "\n")
    with Emulator(responder) as emu:
        proc = toolwire("batch", str(tasks), "--model", model_id(emu), "--out", str(out),
                        "--concurrency", "3", "--ray-cpus", "2", "--ray")
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = lines(out)
    assert results[0] == earlier  # the earlier line is kept, and t0 was not run again
    assert sorted(r["id"] for r in results) == ["t0", "t1", "t2", "t3", "t4"]
    assert "task 0" not in {p for _, p in arrivals}
    for r in results[1:]:
        assert r["ok"] and r["turns"] == 3 and r["answer"] == f"done: task {r['id'][1:]}"
        assert Path(r["log"]).is_file() and Path(r["workdir"]).is_dir()
    assert "batch: 5/5 done · 0 running · 0 failed" in proc.stderr
    t0, open_at = limited[0], limited[0] + retry_after
    per_run: dict[str, list[float]] = defaultdict(list)
    for t, prompt in arrivals:
        if t > t0:
            per_run[prompt].append(t)
    for prompt, times in per_run.items():
        later = times if prompt == arrivals[0][1] else times[1:]
        assert all(t >= open_at for t in later), (prompt, [round(t - t0, 3) for t in times])


def test_a_traced_ray_batch_is_one_trace_across_the_workers(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", 3)
    out = tmp_path / "out.jsonl"
    with Collector() as collector, Emulator(lambda r, w: scripted(r, calls=0)) as emu:
        env = {**ENV, "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint}
        proc = subprocess.run(
            [sys.executable, "-m", "toolwire.cli", "batch", str(tasks), "--model",
             model_id(emu), "--out", str(out), "--concurrency", "3", "--ray-cpus", "2", "--ray",
             "--otel", "--quiet"], env=env, text=True, capture_output=True, timeout=180)
        assert proc.returncode == 0, proc.stderr[-3000:]
        spans = collector.spans()
    assert sorted(r["id"] for r in lines(out)) == ["t0", "t1", "t2"]
    [batch] = [s for s in spans if s.name == "toolwire.batch"]
    runs = [s for s in spans if s.name == "invoke_agent"]
    assert len(runs) == 3  # made in the Ray workers, sent from there
    assert {s.trace_id for s in spans} == {batch.trace_id}
    assert {r.parent_id for r in runs} == {batch.span_id}
    assert len([s for s in spans if s.name == "chat m"]) == 3
