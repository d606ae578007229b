"""What the command line's runs leave behind and show: nothing of the person's overwritten,
nothing left after a failure, the approval prompt after what it is about, quiet notes, and the
small promises (run logs converted, resumed without --model, ids kept as given).

Real subprocesses against the emulator on loopback; the pseudo-terminal ones through `pty`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ptys import drive_on_pty
from toolwire.agent.runlog import read_log
from toolwire.cli.app import main
from toolwire.emulator import Emulator
from toolwire.records import runs_folder

ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}


def toolwire(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
             stdin: str | None = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], capture_output=True,
                          text=True, env=env or ENV, timeout=120, cwd=cwd, input=stdin)


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


WRITE = {"text": "I will write the notes file.", "tool_calls": [
    {"id": "call_w1", "name": "write_file", "arguments": {"path": "notes.txt", "content": "hi"}}]}
LIST = {"text": "Let me look.", "tool_calls": [{"id": "call_l1", "name": "list_files",
                                                "arguments": {}}]}


# ---------------------------------------------------------------- nothing overwritten


def test_demo_refuses_a_folder_that_holds_something(tmp_path: Path) -> None:
    mine = tmp_path / "project"
    mine.mkdir()
    readme = b"# My project\n\nNot the demo's.\n\x00binary tail"
    (mine / "README.md").write_bytes(readme)
    proc = toolwire("demo", "--workdir", str(mine))
    assert proc.returncode == 2
    assert "is not empty" in proc.stderr and "Traceback" not in proc.stderr
    assert (mine / "README.md").read_bytes() == readme
    assert files_under(mine) == ["README.md"]


def test_demo_takes_an_empty_or_new_folder_and_keeps_it(tmp_path: Path) -> None:
    new = tmp_path / "new"
    assert main(["demo", "--workdir", str(new)]) == 0
    assert "textkit.py" in files_under(new)


# ---------------------------------------------------------------- nothing left behind


def test_the_demo_folder_is_removed_unless_kept(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**ENV, "TMPDIR": str(temp)}
    proc = toolwire("demo", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "removed the demo folder" in proc.stdout
    assert files_under(temp) == []
    kept = toolwire("demo", "--keep", env=env)
    assert kept.returncode == 0 and "removed" not in kept.stdout
    [folder] = temp.iterdir()
    assert f"workspace: {folder}" in kept.stdout and (folder / "textkit.py").exists()


def test_a_demo_without_its_key_copies_and_runs_nothing(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    proc = toolwire("demo", "--model", "anthropic:claude-x", env={**ENV, "TMPDIR": str(temp)})
    assert proc.returncode == 2 and "ANTHROPIC_API_KEY" in proc.stderr
    assert proc.stdout == "" and files_under(temp) == []


def test_a_batch_with_a_bad_model_or_out_folder_makes_no_file(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": 1, "prompt": "hi"}\n')
    for model, out in [("anthropic:claude-x", tmp_path / "r.jsonl"),
                       ("nonsense", tmp_path / "r.jsonl"),
                       (f"anthropic:m@{'http://127.0.0.1:9'}", tmp_path / "nowhere" / "r.jsonl")]:
        proc = toolwire("batch", str(tasks), "--model", model, "--out", str(out))
        assert proc.returncode == 2, proc.stderr
        assert files_under(tmp_path) == ["tasks.jsonl"]


def test_a_run_whose_mcp_server_fails_to_start_leaves_no_log(tmp_path: Path) -> None:
    proc = toolwire("run", "x", "--model", "anthropic:m@http://127.0.0.1:9", "--workdir",
                    str(tmp_path), "--mcp", f"{sys.executable} -c pass")
    assert proc.returncode == 2 and "MCP server" in proc.stderr
    assert files_under(tmp_path) == []


# ---------------------------------------------------------------- the approval prompt


@pytest.mark.parametrize(("flags", "shown"), [
    ((), "I will write the notes file."),  # streamed as it came
    (("--no-stream",), "model: I will write the notes file.")])
def test_the_approval_prompt_comes_after_the_text_and_the_call(
        tmp_path: Path, flags: tuple[str, ...], shown: str) -> None:
    with Emulator([WRITE, {"text": "Written."}]) as emu:
        screen = drive_on_pty(["run", "write notes", "--model", f"anthropic:m@{emu.base_url}",
                               "--workdir", str(tmp_path), *flags], [("allow write_file", "y")],
                              ENV)
    text = screen.index(shown)
    call = screen.index('→ write_file {"path":"notes.txt"')
    prompt = screen.index("allow write_file")
    assert text < call < prompt
    assert screen.count("→ write_file") == 1  # not shown again with its result
    assert (tmp_path / "notes.txt").read_text() == "hi"


# ---------------------------------------------------------------- quiet stderr


@pytest.mark.parametrize(("provider", "kind", "count", "said"), [
    ("anthropic", "max_tokens_defaulted", 1, []),  # routine: only under -v
    ("ollama", "schema_rewritten", 7, ["notes: 7 schema_rewritten (--verbose shows them)"])])
def test_notes_are_one_line_unless_verbose(tmp_path: Path, provider: str, kind: str,
                                           count: int, said: list[str]) -> None:
    with Emulator([{"text": "Nothing to do."}, {"text": "Nothing to do."}]) as emu:
        model = f"{provider}:m@{emu.base_url}"
        quiet = toolwire("run", "x", "--model", model, "--workdir", str(tmp_path))
        loud = toolwire("run", "x", "--model", model, "--workdir", str(tmp_path), "-v")
    assert quiet.returncode == loud.returncode == 0, quiet.stderr
    notes = [ln for ln in quiet.stderr.splitlines() if ln.startswith("note")]
    assert notes == said
    assert sum(f": {kind}: " in ln for ln in loud.stderr.splitlines()) == count


def test_the_end_line_names_turns_tokens_cache_reads_and_cost() -> None:
    from toolwire.agent.loop import Agent
    from toolwire.cli.terminal import end_line
    from toolwire.testing import ScriptedModel, reply
    from toolwire.transcript import Usage

    used = Usage(input_tokens=1200, output_tokens=30, cache_read_tokens=1000, cost=0.0123)
    with ScriptedModel([reply("Done.", usage=used)]) as model:
        result = Agent(model=model).run("x")
    assert end_line(result, "run.jsonl") == (
        "stopped: answered after 1 turn(s), 1,230 tokens (1,200 in, 30 out), 1,000 read from "
        "the prompt cache, cost $0.0123; log: run.jsonl")
    with ScriptedModel([reply("Done.")]) as model:
        result = Agent(model=model).run("x")
    assert end_line(result, None) == "stopped: answered after 1 turn(s), 0 tokens (0 in, 0 out)"


# ---------------------------------------------------------------- the smaller promises


def test_run_json_names_every_usage_count_even_when_there_are_none(tmp_path: Path) -> None:
    with Emulator([{"text": "Done."}]) as emu:
        proc = toolwire("run", "x", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
                        str(tmp_path), "--json")
    usage = json.loads(proc.stdout)["usage"]
    assert "type" not in usage
    assert usage == {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0,
                     "cache_write_tokens": 0, "reasoning_tokens": 0, "cost": None}


def record(tmp_path: Path, script: list[dict[str, Any]], *more: str) -> tuple[Path, Emulator]:
    """A run against an emulator left running (the caller stops it); returns its log."""
    emu = Emulator(script).start()
    log = tmp_path / "run.jsonl"
    proc = toolwire("run", "list the files", "--model", f"anthropic:m@{emu.base_url}",
                    "--workdir", str(tmp_path), "--approve", "auto", "--log", str(log), *more)
    assert proc.returncode in (0, 1), proc.stderr
    return log, emu


def test_resume_without_model_reaches_the_server_the_run_used(tmp_path: Path) -> None:
    log, emu = record(tmp_path, [LIST, {"text": "Resumed and done."}], "--max-turns", "1")
    try:
        assert read_log(log).stop == "turn_limit"
        assert read_log(log).header["model"] == f"anthropic:m@{emu.base_url}"
        proc = toolwire("resume", str(log), "--workdir", str(tmp_path), "--json")
    finally:
        emu.stop()
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["answer"] == "Resumed and done."


def test_convert_takes_a_run_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log, emu = record(tmp_path, [LIST, {"text": "Done."}])
    emu.stop()
    assert main(["convert", str(log), "--to", "openai-chat"]) == 0
    body = json.loads(capsys.readouterr().out)
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert body["messages"][2]["tool_calls"][0]["id"] == "call_l1"
    assert body["messages"][3]["tool_call_id"] == "call_l1"
    assert {t["function"]["name"] for t in body["tools"]} >= {"list_files", "write_file"}


def test_explain_names_why_a_stopped_or_cut_run_ended(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    log, emu = record(tmp_path, [{"text": "Done."}])
    emu.stop()
    lines = log.read_text().splitlines()
    stop = json.loads(lines[-1])
    log.write_text("\n".join([*lines[:-1], json.dumps({**stop, "stop": "stopped"})]) + "\n")
    assert main(["explain", str(log)]) == 0
    out = capsys.readouterr().out
    assert "stopped: stopped" not in out
    assert "stop: stopped: its caller stopped the run" in out
    log.write_text("\n".join([*lines[:-1], json.dumps({**stop, "stop": "awaiting_approval"})])
                   + "\n")
    assert main(["explain", str(log)]) == 0
    assert "toolwire resume LOG --allow ID" in capsys.readouterr().out
    log.write_text("\n".join(lines[:-1]) + "\n")  # no stop line: the process died mid-run
    assert main(["explain", str(log)]) == 0
    out = capsys.readouterr().out
    assert "stop: interrupted: the log ends without a stop line" in out


def test_batch_results_keep_each_id_as_the_task_gave_it(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": 3, "prompt": "a"}\n{"id": "3b", "prompt": "b"}\n')
    out = tmp_path / "r.jsonl"
    with Emulator([{"text": "A."}, {"text": "B."}]) as emu:
        first = toolwire("batch", str(tasks), "--model", f"anthropic:m@{emu.base_url}", "--out",
                         str(out), "--concurrency", "1")
        again = toolwire("batch", str(tasks), "--model", f"anthropic:m@{emu.base_url}", "--out",
                         str(out))
    assert first.returncode == 0, first.stderr
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert sorted(ids, key=str) == [3, "3b"]
    assert again.returncode == 0 and "2 already in" in again.stderr


def test_mcp_serve_keeps_stdout_for_the_protocol(tmp_path: Path) -> None:
    """A tools module that prints when imported: the print goes to stderr, and the first line
    on stdout is the server's answer to initialize."""
    (tmp_path / "chatty_tools.py").write_text(
        "import toolwire\nprint('loading my tools...')\n\n"
        "@toolwire.tool\ndef ping() -> str:\n    '''Answer pong.'''\n    return 'pong'\n\n"
        "TOOLS = [ping]\n")
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}}
    proc = subprocess.Popen([sys.executable, "-m", "toolwire.cli", "mcp-serve",
                             "chatty_tools:TOOLS"], cwd=tmp_path, env=ENV, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(init) + "\n")
    proc.stdin.flush()
    first = proc.stdout.readline()
    _, err = proc.communicate(timeout=30)
    assert json.loads(first)["id"] == 1
    assert "loading my tools..." in err


def test_run_system_and_temperature_reach_the_request(tmp_path: Path) -> None:
    with Emulator([{"text": "Done."}]) as emu:
        proc = toolwire("run", "x", "--model", f"openai-compatible:m@{emu.base_url}",
                        "--workdir", str(tmp_path), "--system", "Answer in one word.",
                        "--temperature", "0.2")
        body = emu.received[0].body
    assert proc.returncode == 0, proc.stderr
    assert body["messages"][0] == {"role": "system", "content": "Answer in one word."}
    assert body["temperature"] == 0.2


def test_a_server_that_sends_garbage_is_exit_4_and_explained(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The bad-reply stop on the command line: one line saying so, exit 4, no traceback, and
    explain on its log names what it means."""
    garbage = {"raw": "<html>502 Bad Gateway</html>", "status": 200}
    log = tmp_path / "run.jsonl"
    with Emulator([garbage, garbage]) as emu:
        proc = toolwire("run", "x", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
                        str(tmp_path), "--log", str(log))
    assert proc.returncode == 4, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "stopped: bad_reply after" in proc.stderr
    assert main(["explain", str(log)]) == 0
    assert "stop: bad_reply: a reply arrived that could not be used" in capsys.readouterr().out


def test_a_run_stopped_with_ctrl_c_keeps_its_log(tmp_path: Path) -> None:
    """Leaving nothing behind is for runs that never started: one interrupted mid-run keeps
    the log that resume needs, and the command it was running is stopped, not waited for.

    Ctrl-C comes only once the command has written its marker file, so it always lands while
    the command runs, and the run cannot have ended on its own first (the command sleeps far
    longer than the test waits)."""
    import signal
    import time

    script = [{"tool_calls": [{"id": "call_s1", "name": "run_command",
                               "arguments": {"command": "touch started && sleep 300",
                                             "timeout": 600}}]},
              {"text": "Done."}]
    with Emulator(script) as emu:
        proc = subprocess.Popen(
            [sys.executable, "-m", "toolwire", "run", "wait", "--model",
             f"anthropic:m@{emu.base_url}", "--workdir", str(tmp_path), "--approve", "auto"],
            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(1200):  # until the command is running (polled, not timed)
            if (tmp_path / "started").exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        running = (tmp_path / "started").exists() and proc.poll() is None
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)  # the sleeping command does not hold it up
    runs = runs_folder(tmp_path)
    [log] = runs.glob("*.jsonl")
    assert running, f"the command never started:\n{err}\n{log.read_text()}"
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert '"call_start"' in log.read_text()
    assert read_log(log).pending[0].id == "call_s1"
