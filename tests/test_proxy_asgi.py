"""The proxy's own ASGI layer over real HTTP: methods it does not serve, a body that comes in
pieces, and a client that goes away mid-stream (its log line says so, and the upstream's
stream is closed at once, not read to its end)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from proxy_harness import running_proxy
from toolwire.emulator import Emulator
from toolwire.transcript import Message, Reply, TextPart

pytest.importorskip("uvicorn")

HELLO = Reply(message=Message(role="assistant", parts=(TextPart(text="hello"),)), stop="end_turn")
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
FIRST = (b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",'
         b'"choices":[{"index":0,"delta":{"role":"assistant","content":"hel"},'
         b'"finish_reason":null}]}\n\n')


class Stalling:
    """An upstream on 127.0.0.1 that answers one streamed Chat Completions request with its
    first event and then sends nothing more; ``closed`` is set when the proxy closes the
    connection."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.closed = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            while len(body) < length:
                body += conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                         b"transfer-encoding: chunked\r\n\r\n"
                         + b"%x\r\n" % len(FIRST) + FIRST + b"\r\n")
            conn.settimeout(60)
            try:
                while conn.recv(65536):
                    pass
            except OSError:
                pass
            self.closed.set()


@pytest.fixture
def emulator() -> Iterator[Emulator]:
    with Emulator(lambda request, wire: HELLO) as emu:
        yield emu


@pytest.mark.parametrize("method", ["PUT", "DELETE", "OPTIONS"])
def test_a_method_the_proxy_does_not_serve_is_a_405_naming_those_it_does(
        method: str, emulator: Emulator) -> None:
    with running_proxy(f"openai:m@{emulator.base_url}") as url:
        reply = httpx2.request(method, url + "/v1/chat/completions", json=CHAT)
    assert reply.status_code == 405
    assert reply.headers["allow"] == "GET, HEAD, POST"
    assert emulator.received == []


def test_a_body_sent_in_pieces_reaches_the_upstream_whole(emulator: Emulator) -> None:
    data = json.dumps({**CHAT, "messages": [{"role": "user", "content": "x" * 5000}]},
                      indent=1).encode()
    pieces = [data[i:i + 700] for i in range(0, len(data), 700)]
    with running_proxy(f"openai:m@{emulator.base_url}") as url:
        reply = httpx2.post(url + "/v1/chat/completions", content=iter(pieces),
                            headers={"content-type": "application/json"})
    assert reply.status_code == 200, reply.text
    assert "transfer-encoding" not in reply.headers  # a whole answer carries its length
    assert int(reply.headers["content-length"]) == len(reply.content)
    assert emulator.received[-1].raw == data


def test_a_body_in_pieces_over_the_bound_is_refused(emulator: Emulator) -> None:
    pieces = [b'{"model": "m", "messages": [' + b" " * 600] * 3
    with running_proxy(f"openai:m@{emulator.base_url}", max_body=1000) as url:
        reply = httpx2.post(url + "/v1/chat/completions", content=iter(pieces))
    assert reply.status_code == 413 and "1000 bytes" in reply.text
    assert emulator.received == []


def test_a_client_gone_mid_stream_closes_the_upstream_stream_and_is_logged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolwire.proxy.record import LOG_NAME

    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    upstream = Stalling()
    with running_proxy(f"openai:m@{upstream.url}", record=str(tmp_path)) as url:
        with httpx2.Client(timeout=30) as client, client.stream(
                "POST", url + "/v1/chat/completions", json={**CHAT, "stream": True}) as reply:
            assert reply.status_code == 200
            first = next(reply.iter_raw())
            assert first == FIRST
        # the client's connection is closed here, with the stream still open upstream
        assert upstream.closed.wait(30), "the upstream's stream was left open"
    upstream.sock.close()
    lines = [json.loads(line) for line in (tmp_path / LOG_NAME).read_text().splitlines()]
    entry = next(line for line in lines if line.get("path") == "/v1/chat/completions")
    assert entry["broke"] == "the client went away before the stream ended"
    assert entry["status"] == 200 and entry["stream"] is True
