"""Batches of agent runs against the emulator on loopback: the concurrency cap, results appended
as runs finish, resume after a kill, one shared backoff on a rate limit, progress, bad lines."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from toolwire.batch import (
    BatchError,
    BatchProgress,
    RateGate,
    ResultsFile,
    read_tasks,
    run_batch,
)
from toolwire.emulator import Emulator, Fault
from toolwire.emulator.script import ScriptReply
from toolwire.transcript import Message, Reply, Request, ToolCallPart, Usage

ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
USAGE = Usage(input_tokens=10, output_tokens=5)


def prompt_of(request: Request) -> str:
    return request.messages[0].text


def turn_of(request: Request) -> int:
    """How many tool messages the request carries: 0 for a run's first model call."""
    return sum(1 for m in request.messages if m.role == "tool")


def scripted(request: Request, calls: int = 1, tool: str = "list_files",
             args: dict[str, Any] | None = None) -> Reply:
    """``calls`` turns of one tool call each, then an answer naming the task."""
    n = turn_of(request)
    if n < calls:
        call = ToolCallPart(id=f"call_{n}", name=tool, arguments=args or {})
        return Reply(message=Message(role="assistant", parts=(call,)), stop="tool_calls",
                     usage=USAGE)
    return Reply(message=Message.assistant(f"done: {prompt_of(request)}"), usage=USAGE)


def write_tasks(path: Path, n: int, **extra: Any) -> Path:
    path.write_text("".join(json.dumps({"id": f"t{i}", "prompt": f"task {i}", **extra}) + "\n"
                            for i in range(n)), encoding="utf-8")
    return path


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def model_id(emu: Emulator) -> str:
    return f"openai-compatible:m@{emu.base_url}"


def toolwire(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], env=ENV, text=True,
                          capture_output=True, timeout=120, **kw)


# ------------------------------------------------------------------ the local batch


async def test_fifty_tasks_respect_the_cap_and_append_results_as_runs_finish(
        tmp_path: Path) -> None:
    cap = 7
    active = peak = 0
    delay = 0.02

    def responder(request: Request, wire: str) -> ScriptReply:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)

        def done() -> None:
            nonlocal active
            active -= 1

        asyncio.get_running_loop().call_later(delay, done)  # the reply is held that long
        return ScriptReply(scripted(request), delay=delay)

    out = tmp_path / "out.jsonl"
    seen: list[tuple[int, int]] = []

    def on_progress(p: BatchProgress) -> None:
        seen.append((p.done, len(lines(out)) if out.exists() else 0))

    tasks = write_tasks(tmp_path / "tasks.jsonl", 50, tools=["list_files"])
    async with Emulator(responder) as emu:
        summary = await run_batch(tasks, model_id(emu), out, concurrency=cap, env={},
                                  on_progress=on_progress)
    assert peak == cap  # the cap was reached and never passed
    assert (summary.done, summary.failed, summary.skipped, summary.all_ok) == (50, 0, 0, True)
    results = lines(out)
    assert sorted(r["id"] for r in results) == sorted(f"t{i}" for i in range(50))
    for r in results:
        assert r["stop"] == "answered" and r["ok"] is True
        assert r["answer"] == f"done: task {r['id'][1:]}"
        assert r["turns"] == 2 and r["usage"]["total_tokens"] == 30
        assert r["seconds"] > 0 and Path(r["log"]).is_file()
        assert Path(r["workdir"]).is_dir() and r["resumed"] is False
    assert summary.tokens == 50 * 30
    # each progress report after a run finished saw that run's line already in the file
    assert all(done == count for done, count in seen)
    assert [d for d, _ in seen][-1] == 50


async def test_a_rerun_skips_finished_ids_and_retry_failed_reruns_failures(
        tmp_path: Path) -> None:
    asked: list[str] = []
    broken = {"task 3"}

    def responder(request: Request, wire: str) -> Reply | Fault:
        asked.append(prompt_of(request))
        if prompt_of(request) in broken:
            return Fault("auth")
        return scripted(request, calls=0)

    tasks = write_tasks(tmp_path / "tasks.jsonl", 6)
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps({"id": "t0", "stop": "answered", "ok": True}) + "\n")
    async with Emulator(responder) as emu:
        first = await run_batch(tasks, model_id(emu), out, concurrency=3, env={})
        assert "task 0" not in asked and first.skipped == 1
        assert (first.done, first.failed, first.all_ok) == (5, 1, False)
        assert {r["id"]: r["stop"] for r in lines(out)}["t3"] == "provider_error"
        asked.clear()
        again = await run_batch(tasks, model_id(emu), out, concurrency=3, env={})
        assert asked == [] and again.done == 0 and again.skipped == 6
        broken.clear()
        retried = await run_batch(tasks, model_id(emu), out, concurrency=3, env={},
                                  retry_failed=True)
    assert asked == ["task 3"] and retried.done == 1 and retried.all_ok
    ids = [r["id"] for r in lines(out)]
    assert ids.count("t3") == 2 and ResultsFile(out).finished["t3"]["ok"] is True


async def test_a_rate_limit_makes_every_run_wait_once(tmp_path: Path) -> None:
    retry_after = 0.4
    arrivals: list[tuple[float, str]] = []
    limited: list[float] = []

    def responder(request: Request, wire: str) -> Reply | Fault:
        now = time.monotonic()
        arrivals.append((now, prompt_of(request)))
        if not limited:
            limited.append(now)
            return Fault("rate_limit", retry_after=retry_after)
        return scripted(request, calls=2)

    gate = RateGate()
    tasks = write_tasks(tmp_path / "tasks.jsonl", 8, tools=["list_files"])
    async with Emulator(responder) as emu:
        summary = await run_batch(tasks, model_id(emu), tmp_path / "out.jsonl", concurrency=5,
                                  env={}, gate=gate)
    assert summary.all_ok and gate.backoffs == 1
    t0, open_at = limited[0], limited[0] + retry_after
    per_run: dict[str, list[float]] = defaultdict(list)
    for t, prompt in arrivals:
        if t > t0:
            per_run[prompt].append(t)
    # after the 429, a run may have one request already on its way; every request a run sent
    # after that one waited for the shared retry-after, the limited run's own retry included
    for prompt, times in per_run.items():
        later = times if prompt == arrivals[0][1] else times[1:]
        assert all(t >= open_at for t in later), (prompt, [round(t - t0, 3) for t in times])
    assert sum(1 for t, _ in arrivals if t0 < t < open_at) <= 4  # only those already sent


async def test_task_workdirs_are_copies_of_the_template(tmp_path: Path) -> None:
    template = tmp_path / "template"
    (template / "src").mkdir(parents=True)
    (template / "src" / "app.py").write_text("x = 1\n")
    (tmp_path / "tasks.jsonl").write_text("".join(
        json.dumps({"id": f"w{i}", "prompt": f"w{i}", "workdir": "template", "tools": "coding",
                    "limits": {"max_turns": 5}, "meta": {"n": i}}) + "\n" for i in range(3)))

    def responder(request: Request, wire: str) -> Reply:
        return scripted(request, tool="write_file",
                        args={"path": "notes.txt", "content": prompt_of(request)})

    async with Emulator(responder) as emu:
        await run_batch(tmp_path / "tasks.jsonl", model_id(emu), tmp_path / "out.jsonl",
                        env={})
    results = {r["id"]: r for r in lines(tmp_path / "out.jsonl")}
    for i in range(3):
        folder = Path(results[f"w{i}"]["workdir"])
        assert folder == (tmp_path / "out.runs" / "work" / f"w{i}").resolve()
        assert (folder / "src" / "app.py").read_text() == "x = 1\n"
        assert (folder / "notes.txt").read_text() == f"w{i}"
        assert results[f"w{i}"]["meta"] == {"n": i}
    assert sorted(p.name for p in template.iterdir()) == ["src"]  # the template is untouched


async def test_a_run_that_raises_is_an_error_line_and_the_batch_goes_on(tmp_path: Path) -> None:
    def tools(task: Any, workdir: Path | None) -> list[Any]:
        if task.id == "t1":
            raise RuntimeError("no tools for t1")
        return []

    async with Emulator(lambda r, w: scripted(r, calls=0)) as emu:
        summary = await run_batch(write_tasks(tmp_path / "t.jsonl", 3), model_id(emu),
                                  tmp_path / "out.jsonl", env={}, tools=tools)
    by_id = {r["id"]: r for r in lines(tmp_path / "out.jsonl")}
    assert by_id["t1"]["stop"] == "error" and "no tools for t1" in by_id["t1"]["error"]
    assert by_id["t0"]["ok"] and by_id["t2"]["ok"] and summary.failed == 1


async def test_structured_output_lands_in_the_result(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

    def responder(request: Request, wire: str) -> Reply:
        if turn_of(request):
            return Reply(message=Message.assistant("ok"), usage=USAGE)
        call = ToolCallPart(id="c1", name="final_answer", arguments={"n": 7})
        return Reply(message=Message(role="assistant", parts=(call,)), stop="tool_calls")

    async with Emulator(responder) as emu:
        await run_batch([{"id": "s", "prompt": "count", "output": schema}], model_id(emu),
                        tmp_path / "out.jsonl", env={})
    [result] = lines(tmp_path / "out.jsonl")
    assert result["output"] == {"n": 7} and result["ok"]


# ------------------------------------------------------------------ task lines


@pytest.mark.parametrize(("line", "message"), [
    ("{not json", "not valid JSON"),
    ('["a list"]', "must be a JSON object"),
    ('{"prompt": "p"}', 'needs an "id"'),
    ('{"id": "a"}', 'needs a "prompt"'),
    ('{"id": "a", "prompt": "p", "tool": "coding"}', "unknown field(s) 'tool'"),
    ('{"id": "a", "prompt": "p", "tools": ["rm_rf"]}', "unknown tool(s) 'rm_rf'"),
    ('{"id": "a", "prompt": "p", "limits": {"max_turns": 0}}', "positive whole number"),
    ('{"id": "a", "prompt": "p", "limits": {"turns": 3}}', "unknown limit 'turns'"),
    ('{"id": "a", "prompt": "p", "workdir": "nowhere"}', "is not a folder"),
    ('{"id": "t0", "prompt": "again"}', "already used on line 1"),
])
def test_a_bad_task_line_is_named(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": "t0", "prompt": "fine"}\n\n# a comment\n' + line + "\n")
    with pytest.raises(BatchError) as info:
        read_tasks(path)
    assert f"{path} line 4: " in str(info.value) and message in str(info.value)


def test_the_command_names_the_bad_line_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": 1, "prompt": "fine"}\n{"id": 2}\n')
    proc = toolwire("batch", str(path), "--model", "openai-compatible:m@http://127.0.0.1:9",
                    "--out", str(tmp_path / "out.jsonl"))
    assert proc.returncode == 2
    assert f"{path} line 2: task '2' needs a \"prompt\"" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_torn_last_result_line_is_dropped_and_a_bad_one_is_named(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text('{"id": "a", "ok": true}\n{"id": "b", "o')
    results = ResultsFile(out)
    results.append({"id": "c", "ok": True})
    results.close()
    assert results.torn and [r["id"] for r in lines(out)] == ["a", "c"]
    with ResultsFile(out), pytest.raises(BatchError, match="another batch is writing"):
        ResultsFile(out)
    out.write_text('{"id": "a"}\nnot json\n{"id": "c"}\n')
    with pytest.raises(BatchError, match=r"out.jsonl line 2: not valid JSON"):
        ResultsFile(out)


# ------------------------------------------------------------------ the command


def slow_responder(request: Request, wire: str) -> ScriptReply:
    return ScriptReply(scripted(request), delay=0.03)


def test_the_command_shows_progress_and_its_summary(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", 12, tools=["list_files"])
    with Emulator(slow_responder) as emu:
        proc = toolwire("batch", str(tasks), "--model", model_id(emu), "--out",
                        str(tmp_path / "out.jsonl"), "--concurrency", "4")
    assert proc.returncode == 0, proc.stderr
    shown = re.findall(r"^batch: (\d+)/12 done · (\d+) running · (\d+) failed · ([\d,]+) tokens",
                       proc.stderr, re.M)
    assert shown[0] == ("0", "0", "0", "0")
    assert shown[-1] == ("12", "0", "0", "360")
    assert all(int(running) <= 4 for _, running, _, _ in shown)
    assert "batch: 12 run(s) in" in proc.stderr and "0 without an answer" in proc.stderr
    assert len(lines(tmp_path / "out.jsonl")) == 12


def test_progress_redraws_in_place_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolwire.cli.batch import ProgressLine

    monkeypatch.setenv("COLUMNS", "200")
    err = io.StringIO()
    line = ProgressLine(err, live=True)
    line.show(BatchProgress(total=4, skipped=1, done=1, failed=1, running=2, tokens=1234))
    line.close()
    text = err.getvalue()
    assert text.startswith("\r\x1b[2Kbatch: [############............] 2/4 done")
    assert "2 running · 1 failed · 1,234 tokens" in text and "1 from an earlier run" in text


def test_a_killed_batch_loses_no_finished_run_and_a_rerun_finishes_it(tmp_path: Path) -> None:
    asked: list[str] = []

    def responder(request: Request, wire: str) -> ScriptReply:
        asked.append(prompt_of(request))
        return slow_responder(request, wire)

    tasks = write_tasks(tmp_path / "tasks.jsonl", 30, tools=["list_files"])
    out = tmp_path / "out.jsonl"
    args = ["batch", str(tasks), "--out", str(out), "--concurrency", "3", "--quiet"]
    with Emulator(responder) as emu:
        args += ["--model", model_id(emu)]
        proc = subprocess.Popen([sys.executable, "-m", "toolwire.cli", *args], env=ENV,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
                out.exists() and out.read_text().count("\n") >= 6):
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        before = [x for x in out.read_text().split("\n")[:-1]]  # whole lines only
        assert 6 <= len(before) < 30
        finished = {json.loads(x)["id"] for x in before}
        asked.clear()
        again = toolwire(*args)
    assert again.returncode == 0, again.stderr
    after = out.read_text().split("\n")[:-1]
    assert after[: len(before)] == before  # nothing finished was lost or rewritten
    ids = [json.loads(x)["id"] for x in after]
    assert sorted(ids) == sorted(f"t{i}" for i in range(30))  # every id exactly once
    assert not finished & {f"t{p.split()[1]}" for p in asked}  # finished runs were not rerun
    rerun = [json.loads(x) for x in after[len(before):]]
    resumed = [r for r in rerun if r["resumed"]]
    assert resumed and all(r["ok"] and r["answer"] == f"done: task {r['id'][1:]}"
                           for r in rerun)
    assert all(Path(r["log"]).is_file() for r in rerun)


def test_the_command_has_help_that_explains() -> None:
    proc = toolwire("batch", "--help")
    assert proc.returncode == 0 and "exit codes: 0 success" in proc.stdout
    assert "--concurrency" in proc.stdout and "--ray" in proc.stdout
