"""MCP with a bearer token on both sides: ``toolwire mcp-serve --transport http --token`` refuses
requests without it, toolwire's client sends it (``token=`` or ``headers=``), and a refusal is
told in words that say what the server wants; the token never shows in a message."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_mcp import SRC
from toolwire.errors import ConfigError
from toolwire.mcp import McpConnectionError, connect
from toolwire.mcp._guard import is_loopback
from toolwire.mcp.server import serve_main

TOKEN = "s3cret-Token-for-the-tests-0123456789"


def start(*extra: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolwire.mcp", "--builtin", "coding", "--transport", "http",
         "--port", "0", *extra],
        stderr=subprocess.PIPE, text=True,
        env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin", **(env or {})})
    assert proc.stderr is not None
    line = proc.stderr.readline()
    found = re.search(r"serving MCP at (http://\S+)", line)
    if not found:
        proc.kill()
        raise AssertionError(f"the server did not start: {line}{proc.stderr.read()}")
    return proc, found.group(1)


@pytest.fixture
def served(tmp_path: Path) -> object:
    proc, url = start("--workdir", str(tmp_path), "--token", TOKEN)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def test_the_token_opens_the_server_and_its_absence_is_named(served: str) -> None:
    async with connect(served, token=TOKEN) as server:
        assert "read_file" in {t.name for t in server.tools}
    async with connect(served, headers={"Authorization": f"Bearer {TOKEN}"}) as server:
        assert server.tools
    with pytest.raises(McpConnectionError) as refused:
        await connect(served).aopen()
    message = str(refused.value)
    assert "HTTP 401" in message and "needs authorization" in message
    assert "--mcp-header" in message and "toolwire mcp login" in message


async def test_a_wrong_token_is_refused_without_showing_it(served: str) -> None:
    wrong = "not-the-token-but-long-enough-to-be-secret"
    with pytest.raises(McpConnectionError) as refused:
        await connect(served, token=wrong).aopen()
    message = str(refused.value)
    assert "HTTP 401" in message and "was not accepted" in message
    assert wrong not in message and TOKEN not in message


def test_the_token_can_come_from_the_environment(tmp_path: Path) -> None:
    proc, url = start("--workdir", str(tmp_path), env={"TOOLWIRE_MCP_TOKEN": TOKEN})
    try:
        with connect(url, token=TOKEN) as server:
            assert server.tools
        with pytest.raises(McpConnectionError, match="HTTP 401"):
            connect(url).open()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_server_beyond_loopback_needs_a_token(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--token"):
        serve_main(None, builtin="coding", workdir=tmp_path, transport="http", host="0.0.0.0")
    with pytest.raises(ConfigError, match="--token is for --transport http"):
        serve_main(None, builtin="coding", workdir=tmp_path, token=TOKEN)
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")


def test_headers_are_for_servers_over_http() -> None:
    with pytest.raises(McpConnectionError, match="over HTTP"):
        connect("python -m some_server", token=TOKEN)
