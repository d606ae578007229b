"""The command line, driven end to end in real subprocesses against the emulator on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest

from toolwire.agent.runlog import read_log
from toolwire.codecs import WIRES
from toolwire.emulator import Emulator
from toolwire.records import runs_folder
from toolwire.transcript import ToolResultPart

ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}


def toolwire(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
             stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolwire.cli", *args], cwd=cwd, env=env or ENV, text=True,
        capture_output=True, timeout=timeout, input=stdin,
    )


def last_log(workdir: Path) -> Path:
    logs = sorted(runs_folder(workdir).glob("*.jsonl"))
    assert logs, "the run wrote no log"
    return logs[-1]


def pytest_passes(workdir: Path) -> bool:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                          cwd=workdir, capture_output=True, text=True,
                          env={**ENV, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    return proc.returncode == 0


def test_version() -> None:
    from toolwire import __version__

    proc = toolwire("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"toolwire {__version__}"


@pytest.mark.parametrize("command", ["run", "resume", "demo", "explain", "convert", "check",
                                     "emulate", "mcp-serve", "batch", "config"])
def test_every_command_has_help_that_explains(command: str) -> None:
    proc = toolwire(command, "--help")
    assert proc.returncode == 0
    assert "exit codes: 0 success" in proc.stdout
    assert len(proc.stdout.split()) > 40  # a description, not just a usage line


def test_demo_fixes_the_project_for_real(tmp_path: Path) -> None:
    work = tmp_path / "demo"
    proc = toolwire("demo", "--workdir", str(work))
    assert proc.returncode == 0, proc.stderr
    assert "replayed from a script" in proc.stdout
    assert "tests before: 2 failed, 2 passed" in proc.stdout
    assert "tests after:  4 passed" in proc.stdout
    assert pytest_passes(work)
    assert "return len(text.split())" in (work / "textkit.py").read_text()
    run = read_log(last_log(work))
    assert run.stop == "answered"
    names = [c.name for m in run.messages for c in m.tool_calls]
    assert names == ["run_tests", "read_file", "edit_file", "run_tests"]


@pytest.mark.parametrize("wire", [w for w in WIRES if w != "anthropic-messages"])
def test_demo_in_every_wire(tmp_path: Path, wire: str) -> None:
    from toolwire.cli.app import main

    code = main(["demo", "--wire", wire, "--workdir", str(tmp_path)])
    assert code == 0
    assert pytest_passes(tmp_path)


def test_demo_recover_sends_each_error_back_and_the_next_call_fixes_it(tmp_path: Path) -> None:
    proc = toolwire("demo", "recover", "--workdir", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = read_log(last_log(tmp_path))
    results = [p for m in run.messages if m.role == "tool" for p in m.parts]
    assert all(isinstance(r, ToolResultPart) for r in results)
    errors = [r.content for r in results if isinstance(r, ToolResultPart) and r.is_error]
    assert len(errors) == 4
    unknown, wrong_type, unknown_field, broken = errors
    assert 'Unknown tool "read_files"' in unknown and '"read_file"' in unknown
    assert '"path": got an array, want a string' in wrong_type
    assert '"old_str": unknown field; did you mean "old"?' in unknown_field
    assert "not valid JSON" in broken
    calls = [c for m in run.messages for c in m.tool_calls]
    # each bad call is followed by the call that fixes it
    assert [c.name for c in calls[:3]] == ["read_files", "read_file", "read_file"]
    assert calls[2].arguments == {"path": "textkit.py"}
    assert "old" in calls[5].arguments and "old_str" not in calls[5].arguments
    assert calls[4].parse_error is not None and calls[5].parse_error is None
    assert pytest_passes(tmp_path)


SCRIPT = {"replies": [
    {"text": "Let me look.", "tool_calls": [
        {"id": "call_c1", "name": "list_files", "arguments": {}},
        {"id": "call_c2", "name": "write_file",
         "arguments": {"path": "notes.txt", "content": "hello"}}]},
    {"text": "Done: I listed the files."},
]}


@pytest.fixture
def emulator(tmp_path: Path) -> Any:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    with Emulator(script) as emu:
        yield emu


@pytest.mark.parametrize(("approve", "written"), [("auto", True), ("never", False),
                                                   ("ask", False)])
def test_run_with_each_approval_mode(tmp_path: Path, emulator: Emulator, approve: str,
                                     written: bool) -> None:
    work = tmp_path / "w"
    work.mkdir()
    (work / "a.py").write_text("x = 1\n")
    proc = toolwire("run", "list the files", "--model", f"anthropic:m@{emulator.base_url}",
                    "--workdir", str(work), "--approve", approve, "--json", stdin="")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["stop"] == "answered" and out["answer"] == "Done: I listed the files."
    assert (work / "notes.txt").exists() is written
    run = read_log(out["log"])
    write_result = run.messages[2].parts[1]
    assert isinstance(write_result, ToolResultPart)
    assert write_result.is_error is (not written)
    if approve == "ask":  # no terminal: the call is declined and the model is told why
        assert "no one was at the terminal" in write_result.content
    listing = run.messages[2].parts[0]
    assert isinstance(listing, ToolResultPart) and "a.py" in listing.content


def test_unknown_model_id_lists_the_forms_without_a_traceback(tmp_path: Path) -> None:
    proc = toolwire("run", "x", "--model", "claude-5", "--workdir", str(tmp_path))
    assert proc.returncode == 2
    assert "unknown model id 'claude-5'" in proc.stderr and "anthropic:<model>" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_key_names_its_variable(tmp_path: Path) -> None:
    proc = toolwire("run", "x", "--model", "anthropic:claude-sonnet-4-5", "--workdir",
                    str(tmp_path))
    assert proc.returncode == 2
    assert "ANTHROPIC_API_KEY" in proc.stderr and "Traceback" not in proc.stderr


def test_explain_convert_check_on_a_recorded_body(tmp_path: Path) -> None:
    body = {
        "model": "m", "max_tokens": 100, "system": "Be brief.",
        "tools": [{"name": "get_weather", "input_schema": {
            "type": "object", "properties": {"city": {"type": "string"}}}}],
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Call the tool.", "signature": "EqQBsig"},
                {"type": "tool_use", "id": "toolu_01", "name": "get_weather",
                 "input": {"city": "Paris"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "18°C"}]},
        ],
    }
    path = tmp_path / "req.json"
    path.write_text(json.dumps(body))
    proc = toolwire("explain", str(path))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for expected in ("system prompt", "tool definitions: 1 tool(s)", "user task",
                     "reasoning, passed back unchanged", "tool call get_weather: id toolu_01",
                     "result for get_weather: answers call toolu_01"):
        assert expected in out
    conv = toolwire("convert", str(path), "--to", "openai-chat")
    assert conv.returncode == 0, conv.stderr
    converted = json.loads(conv.stdout)
    assert converted["messages"][0] == {"role": "system", "content": "Be brief."}
    assert converted["messages"][3]["tool_call_id"] == "toolu_01"
    assert "reasoning" in conv.stderr  # the Anthropic thinking block cannot go to OpenAI chat
    good = toolwire("check", str(path))
    assert good.returncode == 0 and "no problems" in good.stdout
    body["messages"].pop()
    body["messages"].append({"role": "user", "content": "and Rome?"})
    path.write_text(json.dumps(body))
    bad = toolwire("check", str(path), "--json")
    assert bad.returncode == 1
    problems = json.loads(bad.stdout)["problems"]
    assert [p["rule"] for p in problems] == ["missing_result"]
    assert "toolu_01" in problems[0]["message"]


def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text('{"hello": 1}')
    proc = toolwire("explain", str(tmp_path / "x.json"))
    assert proc.returncode == 2 and "not a request or reply of any known wire" in proc.stderr
    proc = toolwire("check", str(tmp_path / "missing.json"))
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    proc = toolwire("run", "hi", "--model", "anthropic:m@http://127.0.0.1:9", "--otel",
                    "--workdir", str(tmp_path),
                    env={**ENV, "OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"})
    assert proc.returncode == 2, proc.stderr
    assert "--otel: OTEL_EXPORTER_OTLP_ENDPOINT is 'localhost:4318', which is not an http" \
        in proc.stderr
    assert "Traceback" not in proc.stderr
    for bad, said in ((["--sandbox", "maybe"], "invalid choice: 'maybe'"),
                      (["--allow-network=yes"], "ignored explicit argument 'yes'"),
                      (["--pass-env"], "expected one argument")):
        proc = toolwire("run", "x", "--model", "anthropic:m@http://127.0.0.1:9", *bad)
        assert proc.returncode == 2 and said in proc.stderr, (bad, proc.stderr)


def test_emulate_serves_a_script_over_http(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"replies": [{"text": "hi there"}]}))
    proc = subprocess.Popen([sys.executable, "-m", "toolwire.cli", "emulate", "--script",
                             str(script)], stdout=subprocess.PIPE, text=True, env=ENV)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on http://127.0.0.1:" in line
        url = line.split("listening on ")[1].split()[0]
        resp = httpx2.post(url + "/v1/chat/completions",
                           json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        assert resp.json()["choices"][0]["message"]["content"] == "hi there"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_resume_continues_an_interrupted_run(tmp_path: Path, emulator: Emulator) -> None:
    work = tmp_path / "w"
    work.mkdir()
    log = tmp_path / "run.jsonl"
    proc = toolwire("run", "list the files", "--model", f"anthropic:m@{emulator.base_url}",
                    "--workdir", str(work), "--approve", "auto", "--log", str(log))
    assert proc.returncode == 0
    lines = log.read_text().splitlines()
    # cut the log right after the first reply, as if the process had died there
    first_reply = next(i for i, ln in enumerate(lines) if '"event":"reply"' in ln)
    log.write_text("\n".join(lines[: first_reply + 1]) + "\n")
    with Emulator([{"text": "Resumed and done."}]) as emu2:
        time.sleep(0)
        proc = toolwire("resume", str(log), "--model", f"anthropic:m@{emu2.base_url}",
                        "--workdir", str(work), "--approve", "auto", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["stop"] == "answered" and out["answer"] == "Resumed and done."
    run = read_log(log)
    results = run.messages[2].tool_results
    assert [r.call_id for r in results] == ["call_c1", "call_c2"]


MCP_SERVER = Path(__file__).parent / "fixtures" / "mcp_server_weather.py"


def test_run_uses_the_tools_of_an_mcp_server(tmp_path: Path) -> None:
    script = [
        {"text": "Asking the weather server.",
         "tool_calls": [{"id": "call_m1", "name": "weather", "arguments": {"city": "Lima"}}]},
        {"text": "Sunny in Lima."},
    ]
    with Emulator(script) as emu:
        proc = toolwire("run", "weather in Lima?", "--model", f"anthropic:m@{emu.base_url}",
                        "--workdir", str(tmp_path), "--tools", "none", "--approve", "auto",
                        "--mcp", f"{sys.executable} {MCP_SERVER}", "--json")
        sent_tools = [t["name"] for t in emu.received[0].body["tools"]]
    assert proc.returncode == 0, proc.stderr
    assert "weather" in sent_tools and "forecast" in sent_tools
    run = read_log(json.loads(proc.stdout)["log"])
    result = run.messages[2].tool_results[0]
    assert result.content == "Sunny in Lima, 21 C" and not result.is_error


def test_mcp_serve_answers_an_mcp_client_over_stdio(tmp_path: Path) -> None:
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    (tmp_path / "a.txt").write_text("hello")

    async def go() -> tuple[list[str], str, str]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "toolwire.cli", "mcp-serve", "--builtin", "coding", "--workdir",
                  str(tmp_path)])
        # the server's stderr to this process's own (the SDK's default is whatever sys.stderr
        # was when it was first imported, maybe a capture without a file descriptor)
        async with (stdio_client(params, errlog=sys.__stderr__) as (read, write),
                    ClientSession(read, write) as session):
            await session.initialize()
            listed = await session.list_tools()
            good = await session.call_tool("read_file", {"path": "a.txt"})
            bad = await session.call_tool("read_file", {"path": "../x"})
            return ([t.name for t in listed.tools], good.content[0].text,  # type: ignore[union-attr]
                    bad.content[0].text)  # type: ignore[union-attr]

    names, good, bad = asyncio.run(go())
    assert "read_file" in names and "run_tests" in names
    assert good == "1\thello"
    assert "outside the workspace" in bad


def test_demo_without_pytest_says_what_to_install(tmp_path: Path) -> None:
    # a Python that cannot import pytest: an empty package of that name that fails on import
    blocker = tmp_path / "block" / "pytest"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('blocked for this test')\n")
    env = {**ENV, "PYTHONPATH": str(tmp_path / "block")}
    proc = toolwire("demo", "--workdir", str(tmp_path / "w"), env=env)
    assert proc.returncode == 2
    assert "pip install 'toolwire[demo]'" in proc.stderr and "Traceback" not in proc.stderr
