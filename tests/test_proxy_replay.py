"""``toolwire replay`` of a conversation ``toolwire proxy --record`` wrote: the cassette says the
proxy wrote it, and replay plays its model side (each recorded request sent again through the
emulator, in the recorded wire or another, the client's tool results as recorded) and compares
each reply read back with the recorded one. A real proxy run against the emulator, a real
client conversation over loopback, the CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest

from proxy_harness import running_proxy
from toolwire.emulator import Emulator
from toolwire.http.cassette import cassette_writer

pytest.importorskip("uvicorn")

ENV = {k: v for k, v in os.environ.items()
       if not k.endswith("_API_KEY") and not k.startswith("TOOLWIRE_")}
SCRIPT = [
    {"text": "Checking.", "tool_calls": [
        {"id": "toolu_01A", "name": "Read", "arguments": {"file_path": "notes.txt"}}]},
    {"text": "The notes say alpha."},
]
TOOLS = [{"type": "function", "function": {"name": "Read", "parameters": {
    "type": "object", "properties": {"file_path": {"type": "string"}}}}}]


def toolwire(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], capture_output=True,
                          text=True, env=ENV, timeout=120, input="")


@pytest.fixture(scope="module")
def cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-turn conversation of a Chat Completions client through the proxy to the emulator
    in Anthropic's wire, the client running its own tool (the second turn streamed)."""
    records = tmp_path_factory.mktemp("records")
    messages: list[dict[str, object]] = [{"role": "user", "content": "What do the notes say?"}]
    with Emulator(SCRIPT) as emu, \
            running_proxy(f"anthropic:m@{emu.base_url}", record=str(records)) as url:
        first = httpx2.post(url + "/v1/chat/completions",
                            json={"model": "m", "messages": messages, "tools": TOOLS})
        assert first.status_code == 200, first.text
        said = first.json()["choices"][0]["message"]
        messages += [said, {"role": "tool", "tool_call_id": said["tool_calls"][0]["id"],
                            "content": "alpha"}]
        second = httpx2.post(url + "/v1/chat/completions", json={
            "model": "m", "messages": messages, "tools": TOOLS, "stream": True})
        assert second.status_code == 200 and "alpha" in second.text
    [found] = [p for p in records.glob("*.json")]
    return found


def test_the_proxy_marks_its_cassettes(cassette: Path) -> None:
    assert cassette_writer(cassette) == "proxy"
    assert len(json.loads(cassette.read_text())["interactions"]) == 2


# Ollama: a stop value of Anthropic's own is not written into another wire's reply
@pytest.mark.parametrize("wire", [None, "gemini-generate", "openai-responses", "ollama-chat"])
def test_replay_plays_the_model_side_of_a_proxy_record(cassette: Path,
                                                       wire: str | None) -> None:
    done = toolwire("replay", str(cassette), *(["--wire", wire] if wire else []))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert f"model side of 2 turn(s) of {cassette} in the {wire or 'anthropic-messages'} wire" \
        in done.stdout
    assert "every reply is as recorded" in done.stdout


def edited(cassette: Path, folder: Path, change: Callable[[dict[str, Any]], object]) -> Path:
    """A copy of ``cassette`` in ``folder`` with ``change`` made to its document (unsigned)."""
    data = json.loads(cassette.read_text())
    change(data)
    del data["mac"]
    copy = folder / "edited.json"
    copy.write_text(json.dumps(data))
    return copy


def test_a_turn_the_emulator_refuses_stops_the_replay(cassette: Path,
                                                      tmp_path: Path) -> None:
    def unpaired(data: dict[str, Any]) -> None:
        results = data["interactions"][1]["request"]["body"]["messages"][2]["content"]
        results[0]["tool_use_id"] = "toolu_nowhere"  # a result of no call

    done = toolwire("replay", str(edited(cassette, tmp_path, unpaired)))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "turn 2 of 2: the emulator refused the recorded request" in done.stdout
    assert "Traceback" not in done.stderr


def test_an_error_the_upstream_answered_is_no_turn(cassette: Path, tmp_path: Path) -> None:
    def retried(data: dict[str, Any]) -> None:  # the client's SDK sent it again
        data["interactions"].insert(0, {
            "request": data["interactions"][0]["request"],
            "response": {"status": 429, "headers": {}, "body": {"type": "error", "error": {
                "type": "rate_limit_error", "message": "slow down"}}}})

    done = toolwire("replay", str(edited(cassette, tmp_path, retried)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "model side of 2 turn(s)" in done.stdout


def test_a_proxy_record_runs_no_tools(cassette: Path, tmp_path: Path) -> None:
    done = toolwire("replay", str(cassette), "--workdir", str(tmp_path))
    assert done.returncode == 2
    assert "the proxy recorded" in done.stderr and "Traceback" not in done.stderr


def test_a_cassette_without_the_mark_is_replayed_as_a_run(cassette: Path,
                                                          tmp_path: Path) -> None:
    old = edited(cassette, tmp_path, lambda data: data.pop("written_by"))
    assert cassette_writer(old) is None
    done = toolwire("replay", str(old))
    assert done.returncode == 2  # a run's replay: its tools need a folder
    assert "give --workdir DIR" in done.stderr and "Traceback" not in done.stderr
