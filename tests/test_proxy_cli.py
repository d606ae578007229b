"""``toolwire proxy`` as a real process: it says where it listens, serves, and stops on
Ctrl-C; with ``--workers`` several processes share the port."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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


def test_the_page_shows_the_turns_every_worker_served(tmp_path: Path) -> None:
    """The record folder is what the workers share: each worker's page reads all of it."""
    with Emulator(lambda request, wire: {"text": "ok"}) as emu, \
            proxy_process("--model", f"openai:m@{emu.base_url}", "--workers", "2",
                          "--record", str(tmp_path / "rec")) as (url, proc):
        assert [ask(url).status_code for _ in range(6)] == [200] * 6
        seen = [httpx2.get(url + "/_toolwire/conversations.json", timeout=30).json()
                for _ in range(4)]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    for rows in seen:  # whichever worker answered
        assert [(r["turns"], r["client"]) for r in rows] == [(6, "anthropic-messages")]


def test_every_connection_the_proxy_accepts_sends_without_waiting() -> None:
    """Nagle's algorithm off (``TCP_NODELAY``) on each accepted connection: uvicorn writes a
    reply's head and body apart, and with it on the body waits for the client's delayed
    acknowledgement (tens of milliseconds a reply). `toolwire.proxy.serve` is run in this
    process so its connections can be looked at."""
    import gc
    import socket
    import threading
    import time

    import uvicorn
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    from toolwire.proxy import ProxySettings, bind, serve

    with Emulator(lambda request, wire: {"text": "ok"}) as emu:
        settings = ProxySettings(model=f"openai:m@{emu.base_url}")
        sock = bind(settings)
        started: list[str] = []
        thread = threading.Thread(target=serve, args=(settings, sock, started.append),
                                  daemon=True)
        thread.start()
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        with httpx2.Client() as client:  # one connection, kept open while it is looked at
            deadline = time.monotonic() + 30
            while True:
                try:
                    assert client.get(url + "/health").status_code == 200
                    break
                except httpx2.TransportError:
                    assert time.monotonic() < deadline
                    time.sleep(0.05)
            port = sock.getsockname()[1]
            accepted = [p for p in gc.get_objects()
                        if isinstance(p, (H11Protocol, HttpToolsProtocol))
                        and p.transport is not None and not p.transport.is_closing()
                        and p.transport.get_extra_info("sockname")[1] == port]
            assert accepted
            for protocol in accepted:
                conn = protocol.transport.get_extra_info("socket")
                assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        for server in (o for o in gc.get_objects() if isinstance(o, uvicorn.Server)):
            server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def test_an_idle_client_connection_is_kept_open_past_uvicorns_five_seconds() -> None:
    """A connection left idle for longer than uvicorn's default keep-alive (5 s) is still
    open: the client's next request goes on it rather than meeting it as it closes."""
    import time

    with Emulator(lambda request, wire: {"text": "ok"}) as emu, \
            proxy_process("--model", f"openai:m@{emu.base_url}") as (url, proc), \
            httpx2.Client(timeout=60, limits=httpx2.Limits(keepalive_expiry=60)) as client:
        def local_port() -> int:
            reply = client.post(url + "/v1/messages", json={
                "model": "m", "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]},
                headers={"x-api-key": "k"})
            assert reply.status_code == 200, reply.text
            stream = reply.extensions["network_stream"]
            return int(stream.get_extra_info("client_addr")[1])

        first = local_port()
        time.sleep(6.5)  # past uvicorn's default of 5 s
        assert local_port() == first  # the same connection, still open
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
