"""``toolwire proxy`` as a real process: it says where it listens, serves, and stops on
Ctrl-C; with ``--workers`` several processes share the port."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import httpx2
import pytest

from toolwire.emulator import Emulator

pytest.importorskip("uvicorn")

ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}


@contextmanager
def proxy_process(*args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    proc = subprocess.Popen([sys.executable, "-m", "toolwire.cli", "proxy", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("toolwire proxy listening on http://127.0.0.1:"), (
            line, proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        yield line.split(" on ", 1)[1].split(",", 1)[0], proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def ask(url: str) -> httpx2.Response:
    return httpx2.post(url + "/v1/messages", json={
        "model": "m", "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]},
        headers={"x-api-key": "k"}, timeout=60)


def test_the_command_serves_until_interrupted() -> None:
    with Emulator([{"text": "hello from the upstream"}]) as emu, \
            proxy_process("--model", f"openai:m@{emu.base_url}", "--key", "k") as (url, proc):
        reply = ask(url)
        assert reply.status_code == 200, reply.text
        assert reply.json()["content"][0]["text"] == "hello from the upstream"
        assert emu.received[-1].wire == "openai-chat"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0


def test_workers_share_the_port() -> None:
    with Emulator(lambda request, wire: {"text": "ok"}) as emu, \
            proxy_process("--model", f"openai:m@{emu.base_url}", "--workers", "2") as (url, proc):
        replies = [ask(url) for _ in range(4)]
        assert [r.status_code for r in replies] == [200] * 4
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
