"""MCP with a bearer token on both sides: ``toolwire mcp-serve --transport http --token`` refuses
requests without it, toolwire's client sends it (``token=`` or ``headers=``), and a refusal is
told in words that say what the server wants; the token never shows in a message."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from test_mcp import SRC
from toolwire.cli.app import main
from toolwire.errors import ConfigError
from toolwire.mcp import McpConnectionError, connect, open_servers
from toolwire.mcp._guard import is_loopback
from toolwire.mcp.access import access_map, parse_header
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


def test_a_config_section_and_mcp_header_give_a_server_its_credentials(served: str) -> None:
    config = {"servers": {served: {"token_env": "GUARDED_MCP_TOKEN",
                                   "headers": {"X-Team": "blue"}}}}
    found = access_map([served, "python -m other"], config, env={"GUARDED_MCP_TOKEN": TOKEN})
    assert found == {served: {"token": TOKEN, "headers": {"X-Team": "blue"}}}
    with open_servers([served], access=found) as servers:
        assert servers.tools
    given = access_map([served], {}, ["Authorization: Bearer " + TOKEN])
    with open_servers([served], access=given) as servers:
        assert servers.tools
    header_wins = access_map([served], config, ["x-team: red"], env={"GUARDED_MCP_TOKEN": "x"})
    assert header_wins[served]["headers"] == {"x-team": "red"}


BAD_SECTIONS = {
    "an unknown key": '[mcp.servers."URL"]\ntokn = "x"\n',
    "token_env unset": '[mcp.servers."URL"]\ntoken_env = "NO_SUCH_TOKEN_VARIABLE"\n',
    "token and token_env": '[mcp.servers."URL"]\ntoken = "abc"\ntoken_env = "HOME"\n',
    "headers not a table": '[mcp.servers."URL"]\nheaders = "X-Team: blue"\n',
    "an unknown oauth key": '[mcp.servers."URL".oauth]\nclient = "x"\n',
    "oauth browser not a boolean": '[mcp.servers."URL".oauth]\nbrowser = "no"\n',
    "an unknown grant": '[mcp.servers."URL".oauth]\ngrant = "password"\n',
    "client credentials without a secret":
        '[mcp.servers."URL".oauth]\ngrant = "client_credentials"\nclient_id = "c"\n',
    "an unknown [mcp] key": '[mcp]\nserver = 1\n',
    "a plain-http metadata document": '[mcp]\nclient_metadata_url = "http://a.example/c"\n'
                                      '[mcp.servers."URL".oauth]\nscope = "x"\n',
}


@pytest.mark.parametrize("kind", sorted(BAD_SECTIONS))
def test_a_bad_config_section_is_one_message_naming_the_file(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    url = "http://127.0.0.1:9/mcp"
    config = tmp_path / "config.toml"
    config.write_text(BAD_SECTIONS[kind].replace("URL", url))
    monkeypatch.setenv("TOOLWIRE_CONFIG", str(config))
    code = main(["run", "x", "--model", "anthropic:m@http://127.0.0.1:9", "--workdir",
                 str(tmp_path), "--approve", "auto", "--mcp", url])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert str(config) in err and "config" in err


NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_",
                min_size=1, max_size=20)
VALUES = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=1,
                 max_size=40)


@given(NAMES, VALUES)
def test_a_header_is_read_back_as_written(name: str, value: str) -> None:
    assert parse_header(f"{name}: {value}") == (name, value)
    assert parse_header(f"  {name}:{value}  ") == (name, value)


@given(NAMES, VALUES, st.characters(max_codepoint=31))
def test_a_header_with_a_control_character_is_refused(name: str, value: str,
                                                     control: str) -> None:
    with pytest.raises(ConfigError, match=r"control character|not a header|empty"):
        parse_header(f"{name}: {value[:5]}{control}{value[5:]}x")
