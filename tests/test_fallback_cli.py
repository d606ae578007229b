"""``--fallback`` on the command line, as real subprocesses against the emulator: the terminal
says which model answered and why the chain moved, the run log keeps it, a batch's runs go on
with the fallback too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from toolwire.agent.runlog import read_log
from toolwire.emulator import Emulator

ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
DOWN: list[Any] = [{"fault": "overloaded", "retry_after": 0}] * 4  # the model's own retries


def toolwire(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], cwd=cwd, env=ENV,
                          text=True, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)


def test_run_goes_on_with_the_fallback_and_says_so(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    with Emulator([*DOWN, {"text": "Answered by the fallback."}]) as emu:
        proc = toolwire("run", "hello", "--model", f"anthropic:first@{emu.base_url}",
                        "--fallback", f"openai-compatible:second@{emu.base_url}",
                        "--tools", "none", "--no-stream", "--log", str(log), cwd=tmp_path)
        emu.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert "Answered by the fallback." in proc.stdout
    assert f"[fallback] anthropic:first@{emu.base_url} failed (overloaded)" in proc.stdout
    assert f"[model] openai-compatible:second@{emu.base_url}" in proc.stdout
    [line] = read_log(log).models
    assert line["model"] == f"openai-compatible:second@{emu.base_url}"
    assert [f[1] for f in line["failed"]] == ["overloaded"]
    explained = toolwire("explain", str(log), "--json", cwd=tmp_path)
    assert json.loads(explained.stdout)["models"] == [
        f"turn 1: anthropic:first@{emu.base_url} failed (overloaded: 529 overloaded_error: "
        "Overloaded)", f"turn 1: answered by openai-compatible:second@{emu.base_url}"]


def test_a_bad_key_at_the_first_model_ends_the_run_naming_it(tmp_path: Path) -> None:
    with Emulator([{"fault": "auth"}]) as emu:
        proc = toolwire("run", "hello", "--model", f"anthropic:first@{emu.base_url}",
                        "--fallback", f"openai-compatible:second@{emu.base_url}",
                        "--tools", "none", "--no-stream", "--json", cwd=tmp_path)
        emu.assert_done()
    out = json.loads(proc.stdout)
    assert out["stop"] == "provider_error"
    assert f"model anthropic:first@{emu.base_url}" in out["error"]
    assert [r.wire for r in emu.received] == ["anthropic-messages"]


def test_a_batch_goes_on_with_the_fallback(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": 1, "prompt": "hello"}\n')
    out = tmp_path / "results.jsonl"
    with Emulator([*DOWN, {"text": "Answered by the fallback."}]) as emu:
        proc = toolwire("batch", str(tasks), "--model", f"anthropic:first@{emu.base_url}",
                        "--fallback", f"openai-compatible:second@{emu.base_url}",
                        "--out", str(out), "--quiet", cwd=tmp_path)
        emu.assert_done()
    assert proc.returncode == 0, proc.stderr
    [result] = [json.loads(line) for line in out.read_text().splitlines()]
    assert result["stop"] == "answered" and result["answer"] == "Answered by the fallback."
    assert [f[1] for f in read_log(result["log"]).models[0]["failed"]] == ["overloaded"]


def test_resume_takes_the_chain_again_with_fallback(tmp_path: Path) -> None:
    """A run whose only model was down ends; resumed with --fallback, it goes on there."""
    log = tmp_path / "run.jsonl"
    with Emulator([*DOWN, *DOWN, {"text": "Answered on resume."}]) as emu:
        first = toolwire("run", "hello", "--model", f"anthropic:first@{emu.base_url}",
                         "--tools", "none", "--no-stream", "--log", str(log), cwd=tmp_path)
        assert "provider_error" in first.stdout + first.stderr
        proc = toolwire("resume", str(log), "--fallback",
                        f"openai-compatible:second@{emu.base_url}", "--no-stream", "--json",
                        cwd=tmp_path)
        emu.assert_done()
    out = json.loads(proc.stdout)
    assert out["stop"] == "answered" and out["answer"] == "Answered on resume."
    assert [m["model"] for m in read_log(log).models] == [
        f"openai-compatible:second@{emu.base_url}"]


def test_the_terminal_shows_the_model_when_it_changes_and_counts_the_losses() -> None:
    import io

    from toolwire.cli.terminal import Terminal
    from toolwire.events import ModelChosen

    lost = ("reasoning_dropped: messages[1].parts[0]: x", "reasoning_dropped: messages[3]: y",
            "id_rewritten: c:1: sent as c_1")
    for verbose, shown in ((False, [
            "[fallback] a failed (overloaded): 529 Overloaded", "[model] b",
            "[fallback] lost on the way to b: 2 reasoning_dropped, 1 id_rewritten (-v for each)",
            "[model] a"]), (True, [
            "[fallback] a failed (overloaded): 529 Overloaded", "[model] b",
            *[f"[fallback] lost on the way to b: {loss}" for loss in lost],
            "[model] b", "[model] a"])):
        out = io.StringIO()
        term = Terminal(out=out, err=io.StringIO(), verbose=verbose, color="never")
        for event in (ModelChosen("b", (("a", "overloaded", "529 Overloaded"),), lost),
                      ModelChosen("b"), ModelChosen("a")):
            term.on_event(event)
        assert out.getvalue().splitlines() == shown
