"""A model server that sends without limit meets a named error and a named stop, never a
MemoryError: gzip and deflate bombs, an endless reply, an endless error body, an endless line
of a stream, and a server that keeps a stream open with keep-alives alone.

Each case is ``toolwire run`` in a real subprocess against a tiny HTTP server on 127.0.0.1;
the subprocess's peak memory (its own ``VmHWM``, `peak.run_measured`) is asserted, far under
what the server offered (1 GiB each time).
"""

from __future__ import annotations

import contextlib
import http.server
import os
import subprocess
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from peak import run_measured

ENV = {k: v for k, v in os.environ.items()
       if not k.endswith("_API_KEY") and not k.startswith("TOOLWIRE_")}
GiB, MiB = 1 << 30, 1 << 20
ZEROS = bytes(MiB)


def bomb(wbits: int) -> bytes:
    """1 GiB of zeros, compressed (gzip: wbits 31; zlib-wrapped deflate: 15)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return b"".join(packer.compress(ZEROS) for _ in range(1024)) + packer.flush()


@pytest.fixture(scope="module")
def bombs() -> dict[str, bytes]:
    return {"gzip": bomb(31), "deflate": bomb(15)}


Send = Callable[[http.server.BaseHTTPRequestHandler], None]


@contextlib.contextmanager
def server(send: Send) -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            with contextlib.suppress(OSError):
                send(self)
            self.close_connection = True

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def endless(handler: http.server.BaseHTTPRequestHandler, status: int, kind: str,
            opening: bytes, filler: bytes = b"a" * 65536) -> None:
    """A body with no length that goes on until the client hangs up (1 GiB at most)."""
    handler.send_response(status)
    handler.send_header("content-type", kind)
    handler.send_header("connection", "close")
    handler.end_headers()
    handler.wfile.write(opening)
    for _ in range(GiB // len(filler)):
        handler.wfile.write(filler)


def whole(body: bytes, encoding: str) -> Send:
    def send(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-encoding", encoding)
        handler.send_header("content-length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return send


def run_cli(base_url: str, tmp: Path, *flags: str,
            env: dict[str, str] | None = None) -> tuple[int, str, int]:
    """``toolwire run`` against ``base_url``: its exit code, stderr and peak memory (bytes)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        code, peak = run_measured(
            ["run", "hello", "--model", f"anthropic:m@{base_url}", "--workdir", str(tmp),
             "--tools", "none", *flags],
            env={**ENV, **(env or {})}, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        err.seek(0)
        return code, err.read().decode("utf-8", "replace"), peak


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_compressed_bomb_stops_at_the_decompressed_bound(
        encoding: str, bombs: dict[str, bytes], tmp_path: Path) -> None:
    with server(whole(bombs[encoding], encoding)) as url:
        code, err, peak = run_cli(url, tmp_path, "--no-stream", "--max-decoded", "32MiB")
    assert code == 1, err
    assert "stopped: too_large" in err and "max_decoded" in err
    assert "MemoryError" not in err
    assert peak < 250 * MiB


ENDLESS = {  # status, content type, what comes before the endless part, flags, the bound
    "a reply": (200, "application/json", b'{"content": "', ["--no-stream", "--max-body", "8MiB"],
                "max_body"),
    "an error body": (500, "text/plain", b"it broke: ", ["--no-stream"], "max_error_body"),
    "a line of a stream": (200, "text/event-stream", b"event: message_start\ndata: ",
                           ["--stream", "--max-line", "4MiB"], "max_line"),
    "an event of many lines": (200, "text/event-stream", b"event: message_start\n",
                               ["--stream", "--max-line", "4MiB"], "max_line"),
}


@pytest.mark.parametrize("what", sorted(ENDLESS))
def test_an_endless_body_or_line_stops_at_its_bound(what: str, tmp_path: Path) -> None:
    status, kind, opening, flags, bound = ENDLESS[what]

    def send(handler: http.server.BaseHTTPRequestHandler) -> None:
        lines = what == "an event of many lines"  # each line short: one event never ends
        endless(handler, status, kind, opening, b"data: x\n" * 8192 if lines else b"a" * 65536)

    with server(send) as url:
        code, err, peak = run_cli(url, tmp_path, *flags)
    assert code == 1, err
    assert "stopped: too_large" in err and bound in err
    assert peak < 200 * MiB


def keep_alives(handler: http.server.BaseHTTPRequestHandler) -> None:
    """A stream that sends keep-alive comments alone, far longer than any bound here."""
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("connection", "close")
    handler.end_headers()
    for _ in range(100_000):
        handler.wfile.write(b": still thinking\n\n")
        handler.wfile.flush()
        time.sleep(0.02)


def test_a_stream_of_keep_alives_alone_ends_at_the_idle_bound(tmp_path: Path) -> None:
    with server(keep_alives) as url:
        code, err, _ = run_cli(url, tmp_path, "--stream", "--idle-seconds", "0.5")
    assert code == 1, err
    assert "stopped: provider_error" in err and "idle_seconds" in err


def test_the_run_deadline_ends_a_run_the_user_set_it_for(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("max_seconds = 1\n")
    with server(keep_alives) as url:
        code, err, _ = run_cli(url, tmp_path, "--stream", env={"TOOLWIRE_CONFIG": str(config)})
    assert code == 1, err
    assert "stopped: time_limit" in err
