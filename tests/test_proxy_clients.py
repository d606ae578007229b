"""Real coding agents through the proxy to an upstream of another wire: Claude Code (pinned in
`agent_clients.CLAUDE_CODE`) to a Chat Completions upstream and Codex CLI
(`agent_clients.CODEX`) to an Anthropic one, the emulator playing the upstream. Each agent is
asked for a two-tool task; the emulator has it call two of its own tools (read a file, then
write one or run a command), then answer. The file on disk, the tools' results the agent sent
back and its final answer show the run went through. Each agent is also run straight against
the emulator in its own wire, whose checks then see what the agent sends as it sends it."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from agent_clients import (
    CLAUDE_CODE,
    CODEX,
    FAKE_KEY,
    FIXTURES,
    QUIET,
    TwoTools,
    claude_code,
    codex,
    codex_config,
)
from proxy_harness import documented_losses, recipe, recorded_losses, running_proxy
from toolwire.emulator import Emulator
from toolwire.transcript import TextPart

NOTES = "alpha\nbeta\ngamma\n"
CLAUDE_TASK = "Count the lines of notes.txt into count.txt."
CODEX_TASK = "Sort notes.txt backwards into sorted.txt."
PROXY = "http://127.0.0.1:8800"
"""Where the recipes in docs/proxy.md run the proxy."""


def folders(tmp_path: Path) -> tuple[Path, Path]:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    (work / "notes.txt").write_text(NOTES)
    return work, home


def claude_task(work: Path) -> TwoTools:
    """Read ``notes.txt`` with Read, write ``count.txt`` with Write, then answer."""
    return TwoTools(calls=[("Read", {"file_path": str(work / "notes.txt")}),
                           ("Write", {"file_path": str(work / "count.txt"),
                                      "content": "3 lines\n"})],
                    answer="notes.txt has 3 lines; wrote count.txt")


def statuses(records: Path) -> set[int]:
    """The statuses the proxy answered with, from its log."""
    return {json.loads(line)["status"]
            for line in (records / "proxy.jsonl").read_text().splitlines()}


def claude_answer(stdout: str) -> str:
    result = json.loads(stdout)
    assert result["is_error"] is False, result
    return str(result["result"])


def check_claude(script: TwoTools, work: Path) -> None:
    assert (work / "count.txt").read_text() == "3 lines\n"
    read, wrote = script.result_texts()
    assert "beta" in read and "gamma" in read  # Read ran on the file the emulator named
    assert "count.txt" in wrote
    assert len(script.requests) == 3


@pytest.mark.parametrize("through", ["proxy to Chat Completions", "emulator directly"])
def test_claude_code_finishes_a_two_tool_task(tmp_path: Path, through: str) -> None:
    work, home = folders(tmp_path)
    script = claude_task(work)
    records = tmp_path / "records"
    # The emulator's checks are on both ways: Claude Code's first request holds a message of
    # role `system` among its messages, which the model it asks for takes (a per-model rule),
    # and the proxy moves it where Chat Completions takes it.
    with Emulator(script) as emu:
        if through == "emulator directly":
            done = claude_code(emu.base_url, CLAUDE_TASK,
                               work, home)()
        else:  # the recipe "Claude Code on a local model" in docs/proxy.md
            with running_proxy(f"openai-compatible:m@{emu.base_url}",
                               record=str(records)) as url:
                done = claude_code(url, CLAUDE_TASK,
                                   work, home)()
        wires = {r.wire for r in emu.received}
        assert len(emu.received) == script.answered  # nothing was refused and asked again
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    assert claude_answer(done.stdout) == script.answer
    check_claude(script, work)
    assert wires == ({"anthropic-messages"} if through == "emulator directly"
                     else {"openai-chat"})
    if through != "emulator directly":
        assert statuses(records) == {200}
        assert recorded_losses(records) == documented_losses("Claude Code on a local model")


def codex_task(work: Path) -> TwoTools:
    """Read ``notes.txt`` with one command, write ``sorted.txt`` with another, then answer."""
    return TwoTools(calls=[("exec_command", {"cmd": "cat notes.txt", "workdir": str(work)}),
                           ("exec_command", {"cmd": "sort -r notes.txt > sorted.txt && "
                                                    "echo sorted", "workdir": str(work)})],
                    answer="sorted notes.txt into sorted.txt")


def codex_answer(stdout: str) -> str:
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    assert events[-1]["type"] == "turn.completed", events[-3:]
    said = [e["item"]["text"] for e in events if e["type"] == "item.completed"
            and e["item"]["type"] == "agent_message"]
    return said[-1]


def check_codex(script: TwoTools, work: Path) -> None:
    assert (work / "sorted.txt").read_text() == "gamma\nbeta\nalpha\n"
    read, ran = script.result_texts()
    assert "alpha\nbeta\ngamma" in read  # the command ran on the file the emulator named
    assert "sorted" in ran
    assert len(script.requests) == 3


def test_codex_finishes_a_two_tool_task_against_the_emulator(tmp_path: Path) -> None:
    work, home = folders(tmp_path)
    script = codex_task(work)
    with Emulator(script) as emu:
        done = codex(emu.base_url, CODEX_TASK, work, home)()
        wires = {r.wire for r in emu.received}
        assert len(emu.received) == script.answered  # the emulator's checks refused none
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    assert codex_answer(done.stdout) == script.answer
    check_codex(script, work)
    assert wires == {"openai-responses"}


def test_codex_finishes_a_two_tool_task_through_the_proxy_to_anthropic(tmp_path: Path) -> None:
    work, home = folders(tmp_path)
    script = codex_task(work)
    # Codex's `developer` messages become Anthropic's system prompt (checks on).
    records = tmp_path / "records"
    with Emulator(script) as emu, \
            running_proxy(f"anthropic:m@{emu.base_url}", record=str(records)) as url:
        done = codex(url, CODEX_TASK, work, home)()
        wires = {r.wire for r in emu.received}
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    assert codex_answer(done.stdout) == script.answer
    check_codex(script, work)
    assert wires == {"anthropic-messages"}
    assert statuses(records) == {200}
    assert recorded_losses(records) == documented_losses("Codex CLI on Claude")


def test_the_agents_recipes_are_the_commands_the_tests_run(tmp_path: Path) -> None:
    claude = claude_code(PROXY, CLAUDE_TASK, tmp_path, tmp_path)
    said = recipe("Claude Code on a local model")
    assert (f"ANTHROPIC_BASE_URL={PROXY} ANTHROPIC_API_KEY={FAKE_KEY} \\\n"
            f"    claude {shlex.join(claude.argv[1:])}\n") in said
    assert " ".join(f"{k}={v}" for k, v in QUIET.items()) in said
    assert "toolwire proxy --model openai-compatible:" in said
    assert "npm install -g {}@{}\n".format(*CLAUDE_CODE) in said  # the version tested
    run = codex(PROXY, CODEX_TASK, tmp_path, tmp_path / "codex")
    said = recipe("Codex CLI on Claude")
    assert codex_config(PROXY + "/v1") in said
    assert f"TOOLWIRE_KEY={FAKE_KEY} codex {shlex.join(run.argv[2:])}\n" in said
    assert "toolwire proxy --model anthropic:" in said
    assert "npm install -g {}@{}\n".format(*CODEX) in said


@pytest.mark.parametrize("name", ["claude-code", "codex", "codex-gpt-5.5"])
def test_the_captured_first_requests_decode_in_their_wire(name: str) -> None:
    from toolwire.codecs import get_codec

    captured = json.loads((FIXTURES / f"{name}.json").read_text())
    request = get_codec(captured["wire"]).decode_request(captured["body"])
    names = {t.name for t in request.tools}
    assert {"Read", "Write", "Bash"} <= names if name == "claude-code" else "exec_command" in names
    said = [p.text for m in request.messages if m.role == "user" for p in m.parts
            if isinstance(p, TextPart)]
    assert any("Say hello." in text for text in said)  # the task agent_clients.capture gave
    assert captured["version"] == (CLAUDE_CODE if name == "claude-code" else CODEX)[1]


REFUSED = {
    ("claude-code", "anthropic"): "the same wire passes Claude Code's bytes unchanged, its "
    "message of role system among its messages included, to an upstream model (m) that is not "
    "one that takes it: 'messages.1.role: Input should be 'user' or 'assistant', got 'system''",
}
"""The captured requests an upstream wire still refuses once the proxy has converted them."""


UPSTREAMS = {"anthropic": "anthropic-messages", "openai": "openai-chat",
             "openai-responses": "openai-responses", "gemini": "gemini-generate",
             "ollama": "ollama-chat", "bedrock": "bedrock-converse"}
"""The model id prefixes of the upstreams, and their wires."""


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("name", ["claude-code", "codex", "codex-gpt-5.5"])
def test_a_captured_first_request_goes_through_the_proxy_to_every_wire(
        name: str, upstream: str, monkeypatch: pytest.MonkeyPatch,
        request: pytest.FixtureRequest) -> None:
    import httpx2

    if (name, upstream) in REFUSED:  # strict: once the upstream takes it, this fails
        request.applymarker(pytest.mark.xfail(reason=REFUSED[name, upstream], strict=True))
    for variable in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY",
                     "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.setenv(variable, "upstream-key")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    captured = json.loads((FIXTURES / f"{name}.json").read_text())
    headers = {k: v for k, v in captured["headers"].items()
               if k.startswith(("anthropic-", "x-api-key", "authorization", "content-type"))}
    with Emulator([{"text": "hello"}]) as emu, \
            running_proxy(f"{upstream}:m@{emu.base_url}") as url:
        answered = httpx2.post(url + captured["path"], json=captured["body"], headers=headers,
                               timeout=30)
    assert answered.status_code == 200, answered.text[:2000]
    pieces = re.findall(r'"(?:text|delta)":"([^"]*)"', answered.text)  # whole or streamed
    assert "hello" in "".join(pieces)
    assert [r.wire for r in emu.received] == [UPSTREAMS[upstream]]
