"""Arbitrary changes to real records, given to ``resume``, ``replay`` and ``explain``: every
outcome is a clean message or the question before acting, never a command run nor a request
sent; an unchanged record of the user's own is never asked about.

The records come from real runs; the commands run in this process (`toolwire.cli.app.main`)
so that hypothesis can try many changes. A second emulator stands for the server a changed
record names: it must receive nothing.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolwire import records, signing
from toolwire.cli.app import main
from toolwire.emulator import Emulator

ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
KEY = records.record_key()
TOUCH = {"text": "I will make the marker.", "tool_calls": [
    {"id": "call_c1", "name": "run_command", "arguments": {"command": "touch marker"}}]}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], capture_output=True,
                          text=True, env=ENV, timeout=120, input="")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A deferred run's log and a finished run's cassette, both the user's own."""
    root = tmp_path_factory.mktemp("records")
    work = root / "work"
    work.mkdir()
    with Emulator([TOUCH]) as emu:
        proc = cli("run", "make the marker", "--model", f"anthropic:m@{emu.base_url}",
                   "--workdir", str(work), "--log", str(root / "run.jsonl"), "--approve",
                   "defer")
    assert proc.returncode == 1, proc.stderr
    with Emulator([TOUCH, {"text": "Done."}]) as emu:
        proc = cli("run", "make the marker", "--model", f"anthropic:m@{emu.base_url}",
                   "--workdir", str(work), "--record", str(root / "run.cassette.json"),
                   "--approve", "auto", "--tools", "coding")
    assert proc.returncode == 0, proc.stderr
    (work / "marker").unlink()
    return {"root": root, "work": work, "log": (root / "run.jsonl").read_bytes(),
            "tape": (root / "run.cassette.json").read_bytes()}


def aimed_at(log: bytes, url: str) -> bytes:
    """The log, its model sent to ``url``, signed again as the user's own."""
    signer = signing.Signer(KEY)
    lines = []
    for line in log.split(b"\n")[:-1]:
        body = signing.unsigned(line)[0]
        event = json.loads(body)
        if event["event"] == "header":
            event["model"] = event["context"]["model"] = f"anthropic:m@{url}"
            event["context"]["base_url"] = url
            body = json.dumps(event, separators=(",", ":")).encode()
        lines.append(signer.sign(body))
    return b"\n".join(lines) + b"\n"


HEADER_CHANGES = st.sampled_from([("sandbox", "off"), ("approve", "auto"),
                                  ("allow_network", True), ("test_command", "touch planted"),
                                  ("workdir", "/"), ("tools", "coding")])


@st.composite
def changed(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` changed as a hand, a tool or a command might change it."""
    lines = data.split(b"\n")
    kind = draw(st.sampled_from(["flip", "drop", "repeat", "swap", "header", "insert",
                                 "cut", "strip"]))
    if kind == "flip":
        at = draw(st.integers(0, len(data) - 1))
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1:]
    if kind in ("drop", "repeat", "swap") and len(lines) > 2:
        i = draw(st.integers(0, len(lines) - 2))
        j = draw(st.integers(0, len(lines) - 2))
        if kind == "drop":
            del lines[i]
        elif kind == "repeat":
            lines.insert(j, lines[i])
        else:
            lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines)
    if kind == "header":
        try:
            head = json.loads(lines[0])
        except ValueError:
            return data + b"x"
        if isinstance(head.get("context"), dict):
            name, value = draw(HEADER_CHANGES)
            head["context"][name] = value
        head["model"] = draw(st.sampled_from([head.get("model"), "anthropic:m@http://127.0.0.1:9"]))
        lines[0] = json.dumps(head, separators=(",", ":")).encode()
        return b"\n".join(lines)
    if kind == "insert":
        at = draw(st.integers(0, len(lines) - 1))
        lines.insert(at, draw(st.sampled_from([b'{"event":"message"}', b"[]", b"{}", b"x"])))
        return b"\n".join(lines)
    if kind == "cut":
        return data[:draw(st.integers(0, len(data) - 1))]
    return b"\n".join(signing.unsigned(line)[0] for line in lines)  # signatures taken off


def run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, err.getvalue()


SLOW = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


@SLOW
@given(data=st.data())
def test_a_changed_run_log_is_never_acted_on_unasked(made: dict[str, Any],
                                                     data: st.DataObject) -> None:
    work, path = made["work"], made["root"] / "try.jsonl"
    with Emulator([{"text": "Done."}] * 3) as capture:
        own = aimed_at(made["log"], capture.base_url)
        mutated = data.draw(changed(own))
        path.write_bytes(mutated)
        verdict = signing.verify(mutated, KEY)
        code, err = run(["resume", str(path), "--allow", "call_c1", "--no-stream"])
        if not verdict.own:
            assert code == 2, err
            assert capture.received == [] and not (work / "marker").exists(), err
        else:  # a no-op change (cut in its last line, a line left blank): still yours
            assert "Before acting" not in err
        assert "Traceback" not in err and code != 3, err
    with contextlib.suppress(FileNotFoundError):
        (work / "marker").unlink()


@SLOW
@given(data=st.data())
def test_a_changed_cassette_is_never_replayed_unasked(made: dict[str, Any],
                                                      data: st.DataObject) -> None:
    work, path = made["work"], made["root"] / "try.cassette.json"
    mutated = data.draw(changed(made["tape"]))
    path.write_bytes(mutated)
    verdict = signing.verify_document(mutated, KEY)
    code, err = run(["replay", str(path), "--workdir", str(work)])
    if not verdict.own:
        assert code == 2 and not (work / "marker").exists(), err
    assert "Traceback" not in err and code != 3, err
    with contextlib.suppress(FileNotFoundError):
        (work / "marker").unlink()


@SLOW
@given(data=st.data())
def test_explain_reads_any_changed_record_and_says_whose_it_is(made: dict[str, Any],
                                                              data: st.DataObject) -> None:
    which = data.draw(st.sampled_from(["log", "tape"]))
    path = made["root"] / f"explain-{which}"
    mutated = data.draw(changed(made[which]))
    path.write_bytes(mutated)
    code, err = run(["explain", str(path), "--json"])
    assert code in (0, 1, 2) and "Traceback" not in err, err


def test_the_unchanged_records_are_never_asked_about(made: dict[str, Any]) -> None:
    path = made["root"] / "unchanged.cassette.json"
    path.write_bytes(made["tape"])
    code, err = run(["replay", str(path), "--workdir", str(made["work"])])
    assert code == 0 and "Before acting" not in err, err
    assert (made["work"] / "marker").exists()
    (made["work"] / "marker").unlink()
