"""Small things a person meets on the command line: the task from a file or standard input,
an empty task, batch on Ray without its client, the demo's --no-stream, the run folder's
.gitignore, what --approve never tells the model, emulate scripts with values of the wrong
type. Real subprocesses against the emulator on loopback."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from toolwire.agent.runlog import read_log
from toolwire.emulator import Emulator
from toolwire.records import runs_folder

ENV = {k: v for k, v in os.environ.items()
       if not k.endswith("_API_KEY") and not k.startswith("TOOLWIRE_")}


def toolwire(*args: str, cwd: Path | None = None, stdin: str = "",
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], capture_output=True,
                          text=True, env=env or ENV, timeout=120, cwd=cwd, input=stdin)


def first_task(log: Path) -> str:
    return read_log(log).messages[0].text


@pytest.mark.parametrize("how", ["stdin", "file"])
def test_a_long_task_comes_from_standard_input_or_a_file(tmp_path: Path, how: str) -> None:
    task = "Fix the tests.\n" + "Some context line.\n" * 12_000  # about 230 KB
    log = tmp_path / "run.jsonl"
    with Emulator([{"text": "Done."}]) as emu:
        common = ["--model", f"anthropic:m@{emu.base_url}", "--workdir", str(tmp_path),
                  "--log", str(log)]
        if how == "stdin":
            proc = toolwire("run", "-", *common, stdin=task)
        else:
            (tmp_path / "task.txt").write_text(task)
            proc = toolwire("run", "--task-file", str(tmp_path / "task.txt"), *common)
    assert proc.returncode == 0, proc.stderr
    assert first_task(log) == task


@pytest.mark.parametrize(("args", "stdin", "named"), [
    (["", ], "", "TASK is empty"),
    (["   \n"], "", "TASK is empty"),
    (["-"], "  \n", "standard input is empty"),
    ([], "", "no task"),
])
def test_an_empty_task_is_refused_before_anything_starts(tmp_path: Path, args: list[str],
                                                         stdin: str, named: str) -> None:
    proc = toolwire("run", *args, "--model", "anthropic:m@http://127.0.0.1:9", "--workdir",
                    str(tmp_path), stdin=stdin)
    assert proc.returncode == 2 and named in proc.stderr, proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_demo_recover_follows_no_stream(tmp_path: Path) -> None:
    whole = toolwire("demo", "recover", "--no-stream", env={**ENV, "TMPDIR": str(tmp_path)})
    assert whole.returncode == 0, whole.stderr
    assert "model: Let me look at the code." in whole.stdout  # whole replies, said as such
    streamed = toolwire("demo", "recover", env={**ENV, "TMPDIR": str(tmp_path)})
    assert streamed.returncode == 0, streamed.stderr
    assert "model: Let me look at the code." not in streamed.stdout
    assert "Let me look at the code." in streamed.stdout


def test_a_run_leaves_nothing_of_its_own_in_the_project(tmp_path: Path) -> None:
    """The run log goes to toolwire's state directory: git sees nothing new in the project."""
    git = subprocess.run(["git", "init", "-q", str(tmp_path)], capture_output=True)
    with Emulator([{"text": "Done."}]) as emu:
        proc = toolwire("run", "hi", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
                        str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ([".git"] if git.returncode == 0
                                                          else [])
    if git.returncode == 0:
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                                capture_output=True, text=True, cwd=tmp_path)
        assert status.stdout == ""


def test_approve_never_tells_the_model_the_policy_declined(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    write = {"tool_calls": [{"id": "call_w1", "name": "write_file",
                             "arguments": {"path": "a.txt", "content": "x"}}]}
    with Emulator([write, {"text": "Could not."}]) as emu:
        proc = toolwire("run", "write", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
                        str(tmp_path), "--approve", "never", "--log", str(log))
    assert proc.returncode == 0, proc.stderr
    [result] = [r for m in read_log(log).messages for r in m.tool_results]
    assert result.is_error and "approval policy declined" in result.text
    assert "user" not in result.text


def test_a_temperature_claude_does_not_take_is_said_at_the_start(tmp_path: Path) -> None:
    with Emulator([{"text": "Done."}, {"text": "Done."}]) as emu:
        claude = toolwire("run", "hi", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
                          str(tmp_path), "--temperature", "0.2")
        openai = toolwire("run", "hi", "--model", f"openai:m@{emu.base_url}", "--workdir",
                          str(tmp_path), "--temperature", "0.2")
    assert claude.returncode == 0 == openai.returncode, claude.stderr + openai.stderr
    first = claude.stderr.splitlines()[0]
    assert first.startswith("note: --temperature is not sent to anthropic:m@")
    assert "--temperature" not in openai.stderr
    assert emu.received[0].body.get("temperature") is None
    assert emu.received[1].body.get("temperature") == 0.2


def test_otel_with_no_collector_says_the_spans_were_not_delivered(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.sdk")
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    env = {**ENV, "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
           "OTEL_METRICS_EXPORTER": "none"}
    with Emulator([{"text": "Done."}]) as emu:
        proc = toolwire("run", "hi", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
                        str(tmp_path), "--otel", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "span(s) were not delivered" in proc.stderr and "127.0.0.1:9" in proc.stderr
    assert "Transient error" not in proc.stderr  # one line, not the exporter's every retry


def test_convert_names_the_cache_marker_as_lost_not_the_system_prompt(tmp_path: Path) -> None:
    body = {"model": "claude-x", "max_tokens": 100, "messages": [{"role": "user",
                                                                   "content": "hi"}],
            "system": [{"type": "text", "text": "Be brief.",
                        "cache_control": {"type": "ephemeral"}}]}
    (tmp_path / "b.json").write_text(json.dumps(body))
    proc = toolwire("convert", str(tmp_path / "b.json"), "--to", "openai-chat")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["messages"][0] == {"role": "system", "content": "Be brief."}
    assert "cache_control" in proc.stderr and "the system prompt was sent" in proc.stderr
    assert "system: set for" not in proc.stderr


def test_the_html_reports_token_legend_is_text_beside_the_chart(tmp_path: Path) -> None:
    log = Path(__file__).parent / "fixtures" / "runlogs" / "format2_streamed.jsonl"
    page = tmp_path / "page.html"
    proc = toolwire("explain", str(log), "--html", str(page))
    assert proc.returncode == 0, proc.stderr
    html = page.read_text()
    chart = html[html.index('<svg id="usage-chart"'):]
    svg, after = chart.split("</svg>", 1)
    assert "input tokens" not in svg  # inside a fixed-width SVG the legend was cut off
    assert after.startswith('<p class="legend">') and "input tokens" in after.split("</p>")[0]


def read_only_run(folder: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """``toolwire ARGV`` with ``folder`` read-only to it: a read-only bind mount in a mount
    namespace of its own when run as root (whom file modes do not stop), else mode 555."""
    command = [sys.executable, "-m", "toolwire.cli", *argv]
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            return subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=120,
                                  input="")
        finally:
            folder.chmod(0o755)
    if shutil.which("unshare") is None:
        pytest.skip("no way to make a read-only folder for root here")
    quoted = " ".join(shlex.quote(a) for a in command)
    script = (f"mount --bind {shlex.quote(str(folder))} {shlex.quote(str(folder))} && mount -o "
              f"remount,bind,ro {shlex.quote(str(folder))} && exec {quoted}")
    proc = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                          capture_output=True, text=True, env=ENV, timeout=120, input="")
    if "mount:" in proc.stderr or "unshare:" in proc.stderr:
        pytest.skip(f"cannot make a read-only folder here: {proc.stderr.strip()}")
    return proc


def test_a_read_only_checkout_runs_commands_with_its_log_elsewhere(tmp_path: Path) -> None:
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "a.txt").write_text("hello from a read-only folder\n")
    call = {"tool_calls": [{"id": "c1", "name": "run_command",
                            "arguments": {"command": "cat a.txt"}}]}
    with Emulator([call, {"text": "Read it."}]) as emu:
        args = ["run", "read a.txt", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
                str(work), "--approve", "auto"]
        ran = read_only_run(work, args)  # the log goes to the state directory
    assert ran.returncode == 0, ran.stderr
    [log] = runs_folder(work).glob("*.jsonl")
    [result] = [r for m in read_log(log).messages for r in m.tool_results]
    assert not result.is_error and "hello from a read-only folder" in result.text
    assert sorted(p.name for p in work.iterdir()) == ["a.txt"]


@pytest.mark.parametrize(("wire", "body", "named"), [
    ("openai-chat", {"model": "m", "messages": [{"role": "wizard", "content": "hi"}]},
     "messages[0].role"),
    ("openai-responses", {"model": "m", "input": [{"role": "wizard", "content": "hi"}]},
     "input[0].role"),
    ("gemini-generate", {"contents": [{"role": "wizard", "parts": [{"text": "hi"}]}]},
     "contents[0].role"),
])
def test_an_unknown_role_is_an_error_not_a_user_turn(tmp_path: Path, wire: str,
                                                     body: dict[str, object], named: str) -> None:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body))
    proc = toolwire("convert", str(path), "--from", wire, "--to", "anthropic-messages")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert named in proc.stderr and "Traceback" not in proc.stderr


def test_the_docs_name_the_run_log_format_written_today() -> None:
    from toolwire.agent.runlog import LOG_FORMAT

    agent_md = (Path(__file__).parent.parent / "docs" / "agent.md").read_text()
    assert f'"format": {LOG_FORMAT}` today' in agent_md


def test_explain_does_not_promise_resume_fixes_what_ended_a_run(tmp_path: Path) -> None:
    log = Path(__file__).parent / "fixtures" / "runlogs" / "format1_interrupted.jsonl"
    proc = toolwire("explain", str(log))
    assert proc.returncode == 0, proc.stderr
    assert "goes on from there" in proc.stdout and "it ends the same way" in proc.stdout


def test_a_plain_run_prints_only_what_a_person_can_act_on(tmp_path: Path) -> None:
    from toolwire.tools.sandbox import Sandbox

    with Emulator([{"text": "Done."}, {"text": "Done."}]) as emu:
        model = f"anthropic:m@{emu.base_url}"
        quiet = toolwire("run", "hi", "--model", model, "--workdir", str(tmp_path))
        loud = toolwire("run", "hi", "--model", model, "--workdir", str(tmp_path), "-v")
    assert quiet.returncode == loud.returncode == 0, quiet.stderr
    lines = [ln for ln in quiet.stderr.splitlines() if ln.strip()]
    if Sandbox("auto").kind == "bubblewrap":  # the usual confinement: said under -v only
        assert not any(ln.startswith("sandbox:") for ln in lines)
        assert any(ln.startswith("sandbox:") for ln in loud.stderr.splitlines())
    assert not any(ln.startswith("notes:") for ln in lines)  # routine notes only
    assert lines[-1].startswith("stopped: answered")  # the last line says why it stopped
    assert "max_tokens_defaulted" in loud.stderr


def test_a_run_that_stops_without_an_answer_names_its_log_and_resume_line(
        tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    listing = {"tool_calls": [{"id": "c1", "name": "list_files", "arguments": {}}]}
    with Emulator([listing]) as emu:
        proc = toolwire("run", "look", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
                        str(tmp_path), "--max-turns", "1", "--log", str(log))
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("stopped: turn_limit") and f"toolwire resume {log} goes on" in last
