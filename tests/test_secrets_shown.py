"""Keys a model writes (whole, or split across stream events), keys in the task and keys in a
provider's error body reach neither the run log, nor ``explain``, nor the terminal; a part
the provider signed is kept as it came, since it goes back to it unchanged."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ptys import run_on_pty
from toolwire.emulator import Emulator
from toolwire.secrets import Redactor, StreamRedactor, redact_json

KEY = "sk-ant-api03-" + "Q7x9" * 12
TOKEN = "hunter2-very-secret-value"
ENV = {**{k: v for k, v in os.environ.items()
          if not k.endswith("_API_KEY") and not k.startswith("TOOLWIRE_")},
       "MY_SERVICE_TOKEN": TOKEN}


def toolwire(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], capture_output=True,
                          text=True, env=ENV, timeout=120, stdin=subprocess.DEVNULL)


def assert_hidden(*texts: str) -> None:
    for text in texts:
        assert KEY not in text and TOKEN not in text
        assert KEY[:30] not in text  # not even a part of it


def test_keys_in_the_task_and_the_models_text_are_kept_nowhere(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    # a third of the text ends inside the key: the stream sends it in two pieces
    text = f"The key is {KEY} and the token {TOKEN}."
    with Emulator([{"text": text}]) as emu:
        proc, screen = run_on_pty(
            [sys.executable, "-m", "toolwire.cli", "run", f"use {KEY} and {TOKEN}", "--model",
             f"anthropic:m@{emu.base_url}", "--workdir", str(tmp_path), "--tools", "none",
             "--stream", "--log", str(log)], ENV)
        sent = json.dumps(emu.received[0].body)
    assert proc.returncode == 0, screen
    assert KEY in sent  # the model itself was given the task as it was
    assert "[redacted: Anthropic key]" in screen and "[redacted: MY_SERVICE_TOKEN]" in screen
    explained = toolwire("explain", str(log))
    as_json = toolwire("explain", str(log), "--json")
    assert_hidden(screen, log.read_text(), explained.stdout, as_json.stdout)
    assert "[redacted: Anthropic key]" in log.read_text()


@contextlib.contextmanager
def failing_server() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            body = json.dumps({"type": "error", "error": {
                "type": "invalid_request_error",
                "message": f"the key {KEY} may not use this model"}}).encode()
            self.send_response(400)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_key_in_a_providers_error_body_is_kept_nowhere(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    with failing_server() as url:
        proc = toolwire("run", "hi", "--model", f"anthropic:m@{url}", "--workdir",
                        str(tmp_path), "--tools", "none", "--log", str(log))
    assert proc.returncode == 1
    assert "may not use this model" in proc.stderr and "may not use" in log.read_text()
    assert_hidden(proc.stderr, log.read_text(), toolwire("explain", str(log)).stdout)


@given(st.text(alphabet="ab -=\n"), st.text(alphabet="ab -=\n"),
       st.lists(st.integers(min_value=1, max_value=40), max_size=30))
def test_a_key_split_anywhere_across_pieces_is_redacted(
        before: str, after: str, cuts: list[int]) -> None:
    redact = Redactor(env={"MY_SERVICE_TOKEN": TOKEN})
    text = f"{before}{KEY}{after} {TOKEN}{before}"
    pieces, at = [], 0
    for cut in cuts:
        pieces.append(text[at:at + cut])
        at += cut
    pieces.append(text[at:])
    stream = StreamRedactor(redact)
    shown = "".join(stream.feed(p) for p in pieces) + stream.flush()
    assert shown == redact(text)
    assert KEY not in shown and TOKEN not in shown


def test_a_signed_part_is_kept_as_it_came() -> None:
    redact = Redactor(env={})
    signed = {"type": "reasoning", "text": f"thinking of {KEY}",
              "provider_data": {"anthropic-messages": {"signature": "abc"}}}
    plain = {"type": "text", "text": f"here is {KEY}"}
    assert redact_json({"parts": [signed, plain]}, redact) == {
        "parts": [signed, {"type": "text", "text": "here is [redacted: Anthropic key]"}]}
