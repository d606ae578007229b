"""OAuth for MCP servers against an authorization server of the tests' own
(`oauth_server.OAuthWorld`): sign-in with PKCE through the loopback redirect, tokens kept mode
0600 and refreshed before they expire, step-up when the server asks for more scopes, sign-out,
``toolwire mcp login`` with a browser and with the address pasted back, and no token in any
record, span or message."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import toolwire
from oauth_server import OAuthWorld, browser
from test_mcp import SRC
from toolwire import Agent
from toolwire.errors import ToolError
from toolwire.mcp import McpConnectionError, connect
from toolwire.mcp.access import access_map
from toolwire.mcp.auth import OAuth, token_path
from toolwire.testing import ScriptedModel, call, reply

HERE = Path(__file__).parent


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[OAuthWorld]:
    monkeypatch.setenv("TOOLWIRE_STATE_DIR", str(tmp_path / "state"))
    made = OAuthWorld().start()
    try:
        yield made
    finally:
        made.stop()


def no_browser(url: str) -> None:
    raise AssertionError(f"no sign-in was expected, but the browser was sent to {url}")


async def test_sign_in_refresh_step_up_and_sign_out(world: OAuthWorld) -> None:
    async with connect(world.mcp_url, oauth=OAuth(opener=browser)) as server:
        assert {t.name for t in server.tools} == {"whoami", "admin"}
        first = await server.call("whoami")
    [asked] = [q for path, q in world.seen if path == "/as/authorize"]
    assert asked["code_challenge_method"] == "S256" and len(asked["code_challenge"]) == 43
    assert asked["resource"] == world.mcp_url and asked["scope"] == "files"
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/callback", asked["redirect_uri"])
    [exchanged] = world.grants("authorization_code")
    assert exchanged["resource"] == world.mcp_url and exchanged["code_verifier"]
    kept = token_path(world.mcp_url)
    assert kept.stat().st_mode & 0o777 == 0o600
    assert kept.parent == Path(os.environ["TOOLWIRE_STATE_DIR"]) / "mcp-auth"
    assert first == f"you came with {world.last_token}"

    # a later run given only the URL (as --mcp URL is) uses the kept tokens; about to
    # expire, they are refreshed, with no second sign-in
    data = json.loads(kept.read_text())
    data["expires_at"] = time.time() - 5
    kept.write_text(json.dumps(data))
    given = access_map([world.mcp_url, "python -m other"], None)
    assert list(given) == [world.mcp_url] and isinstance(given[world.mcp_url]["oauth"], OAuth)
    later = dataclasses.replace(given[world.mcp_url]["oauth"], opener=no_browser)
    async with connect(world.mcp_url, oauth=later) as server:
        assert await server.call("whoami") != first
    [refreshed] = world.grants("refresh_token")
    assert refreshed["refresh_token"] == data["tokens"]["refresh_token"]
    assert refreshed["resource"] == world.mcp_url
    assert len([p for p, _ in world.seen if p == "/as/authorize"]) == 1

    # the admin tool needs a scope not granted yet: signed in again with both scopes
    async with connect(world.mcp_url, oauth=OAuth(opener=browser)) as server:
        assert await server.call("admin") == "admin work done"
    scopes = [q["scope"] for p, q in world.seen if p == "/as/authorize"]
    assert len(scopes) == 2 and set(scopes[1].split()) == {"files", "admin"}
    assert set(json.loads(kept.read_text())["tokens"]["scope"].split()) == {"files", "admin"}

    out = subprocess.run([sys.executable, "-m", "toolwire", "mcp", "logout", world.mcp_url],
                         capture_output=True, text=True, timeout=60, check=False,
                         env={**os.environ, "PYTHONPATH": SRC})
    assert out.returncode == 0 and "signed out" in out.stdout
    assert not kept.exists()


def cli(*args: str, **options: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "toolwire", "mcp", *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": SRC, **options})  # type: ignore[dict-item]


def test_mcp_login_opens_the_browser_and_keeps_the_tokens(world: OAuthWorld) -> None:
    visit = f"{sys.executable} {HERE / 'oauth_browser.py'} %s"
    proc = cli("login", world.mcp_url, "--scope", "files admin", BROWSER=visit)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "signed in to" in out and str(token_path(world.mcp_url)) in out
    [asked] = [q for p, q in world.seen if p == "/as/authorize"]
    assert asked["scope"] == "files admin"
    assert world.last_token not in out + err


def test_mcp_login_without_a_browser_takes_the_pasted_address(world: OAuthWorld) -> None:
    proc = cli("login", world.mcp_url, "--no-browser")
    assert proc.stderr is not None and proc.stdin is not None
    shown = ""
    while "paste here" not in shown:
        line = proc.stderr.readline()
        assert line, f"login ended early: {shown}"
        shown += line
    [address] = re.findall(r"^\s+(http://\S+/as/authorize\?\S+)$", shown, re.MULTILINE)
    landed = httpx2.get(address, timeout=30).headers["location"]  # the browser, elsewhere
    proc.stdin.write(landed + "\n")
    proc.stdin.flush()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, shown + err
    assert "signed in to" in out and token_path(world.mcp_url).exists()


def test_no_token_reaches_a_record_a_span_or_a_message(world: OAuthWorld,
                                                       tmp_path: Path) -> None:
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    toolwire.instrument(tracer_provider=provider, capture_content=True)
    log = tmp_path / "run.jsonl"
    try:
        with connect(world.mcp_url, oauth=OAuth(opener=browser)) as server:
            model = ScriptedModel([reply(call("whoami")), reply("done")])
            result = Agent(model=model, tools=list(server.tools)).run("who am I?", log=log)
    finally:
        toolwire.uninstrument()
    token = world.last_token
    data = json.loads(token_path(world.mcp_url).read_text())
    secrets = [token, data["tokens"]["refresh_token"]]
    assert token.startswith("at-")
    seen_by_model = json.dumps([m.model_dump() if hasattr(m, "model_dump") else str(m)
                                for m in model.requests[-1].messages], default=str)
    assert "you came with [redacted: MCP access token]" in seen_by_model
    texts = [log.read_text(), seen_by_model, str(result.messages),
             json.dumps([dict(s.attributes or {}) for s in spans.get_finished_spans()],
                        default=str)]
    for text in texts:
        for secret in secrets:
            assert secret not in text
    assert spans.get_finished_spans()

    world.access.clear()  # every token revoked: the refusal is told without any of them
    with pytest.raises(McpConnectionError) as refused:
        connect(world.mcp_url, oauth=OAuth(opener=no_browser, keep=True),
                timeout=10).open()
    for secret in secrets:
        assert secret not in str(refused.value)


def test_the_published_client_metadata_document_names_its_own_address() -> None:
    from toolwire.mcp.auth import CLIENT_METADATA_URL

    document = json.loads((HERE.parent / "docs" / "oauth-client-metadata.json").read_text())
    assert document["client_id"] == CLIENT_METADATA_URL
    assert document["redirect_uris"] == ["http://127.0.0.1/callback"]
    assert document["token_endpoint_auth_method"] == "none"


def test_mcp_serve_takes_the_tokens_of_an_authorization_server(world: OAuthWorld,
                                                               tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolwire.mcp", "--builtin", "coding", "--workdir", str(tmp_path),
         "--transport", "http", "--port", str(port), "--authorization-server", world.issuer,
         "--introspection-url", f"{world.issuer}/introspect", "--resource-url", url],
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": SRC})
    try:
        assert proc.stderr is not None and "serving MCP at" in proc.stderr.readline()
        metadata = httpx2.get(f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp",
                              timeout=30).json()
        assert metadata["resource"] == url and metadata["authorization_servers"] == [
            world.issuer]
        refused = httpx2.post(url, json={}, timeout=30)
        assert refused.status_code == 401
        assert "resource_metadata=" in refused.headers["www-authenticate"]
        with connect(url, oauth=OAuth(opener=browser, keep=False)) as server:
            assert "read_file" in {t.name for t in server.tools}
        [asked] = [q for p, q in world.seen if p == "/as/authorize"]
        assert asked["resource"] == url
        assert any(p == "/as/introspect" for p, _ in world.seen)
        with pytest.raises(McpConnectionError, match="HTTP 401"):
            connect(url, token="at-not-one-the-server-issued-0123").open()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def test_a_token_refused_mid_run_is_told_to_the_model_without_it(
        world: OAuthWorld) -> None:
    async with connect(world.mcp_url, oauth=OAuth(opener=browser, keep=False)) as server:
        assert await server.call("whoami")
    token = world.last_token
    async with connect(world.mcp_url, token=token) as server:
        world.access.clear()  # revoked while the connection is open
        with pytest.raises(ToolError) as refused:
            await server.call("whoami")
    said = str(refused.value)
    assert "HTTP 401" in said and "was not accepted" in said and "toolwire mcp login" in said
    assert token not in said


def test_a_failed_sign_in_is_one_message_and_exit_2(world: OAuthWorld) -> None:
    world.issuer_said = "https://elsewhere.example/as"  # metadata of another server: refused
    proc = cli("login", world.mcp_url, "--no-browser", "--timeout", "30")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "HTTP 401" in err and "issuer" in err
    assert not token_path(world.mcp_url).exists() or "tokens" not in json.loads(
        token_path(world.mcp_url).read_text())
