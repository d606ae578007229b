"""Every command fed every kind of bad input it takes: one message, exit 2, never a traceback.

The whole cross product (each kind of bad file, output path, folder, port, model id, number,
MCP server and tools module, with each command that takes it) runs in this process through
`toolwire.cli.app.main`, each case in a thread with a time limit so a command that starts
serving instead of refusing fails rather than hangs. A representative subset, the missing
extras (which need an interpreter where the import fails) and an internal error run as real
subprocesses, several at once.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from toolwire import records, signing
from toolwire.agent.runlog import LOG_FORMAT
from toolwire.cli.app import main

ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens there
MODEL = f"anthropic:m@{CLOSED}"


def header(**fields: object) -> dict[str, object]:
    return {"event": "header", "t": 1.0, "format": LOG_FORMAT, "toolwire": "0", "model": MODEL,
            "system": None, "tools": [], "settings": {}, **fields}


def log_text(*events: dict[str, object]) -> str:
    """Run log lines signed with this test session's record key, as toolwire writes them."""
    signer = signing.Signer(records.record_key())
    return "".join(signer.sign(json.dumps(e).encode()).decode() + "\n" for e in events)


TASK = {"event": "message", "t": 1.0, "index": 0,
        "message": {"type": "message", "role": "user", "parts": [{"type": "text", "text": "hi"}]}}
REPLY = {"type": "reply", "message": {"type": "message", "role": "assistant",
                                      "parts": [{"type": "text", "text": "hello"}]}}
VALID_LOG = log_text(header(), TASK)

def _event_streams() -> tuple[bytes, bytes]:
    """A captured ConverseStream body with one byte of a frame's payload changed (its CRC no
    longer matches), and the same body cut off inside its last frame."""
    from toolwire.codecs import get_codec
    from toolwire.transcript import Message, Reply

    whole = b"".join(get_codec("bedrock-converse").encode_stream(
        Reply(message=Message.assistant("a captured reply"))))
    flipped = bytearray(whole)
    flipped[len(whole) // 2] ^= 0x20
    return bytes(flipped), whole[:-7]


BAD_CRC, CUT_SHORT = _event_streams()

BAD_FILES: dict[str, bytes | None] = {
    "event-stream-bad-crc": BAD_CRC,
    "event-stream-cut-short": CUT_SHORT,
    "missing": None,
    "folder": b"",  # made a folder below
    "binary": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
    "non-utf8": '{"model": "m", "messages": [{"role": "user", "content": "caf\xe9"}]}'.encode(
        "latin-1"),
    "empty": b"",
    "not-json": b"{this is not json",
    "json-of-no-wire": b'{"hello": 1}',
    "json-nested-too-deep": b"[" * 100_000,
    "log-newer-format": log_text(header(format=LOG_FORMAT + 7), TASK).encode(),
    "log-format-as-text": log_text(header(format="2"), TASK).encode(),
    "log-model-number": log_text(header(model=5), TASK).encode(),
    "log-tools-not-a-list": log_text(header(tools=5), TASK).encode(),
    "log-tool-not-an-object": log_text(header(tools=["read_file"]), TASK).encode(),
    "log-system-number": log_text(header(system=["x"]), TASK).encode(),
    "log-message-number": log_text(header(), {**TASK, "message": 5}).encode(),
    "log-parts-number": log_text(header(), {**TASK, "message": {
        "type": "message", "role": "user", "parts": 5}}).encode(),
    "log-index-text": log_text(header(), {**TASK, "index": "0"}).encode(),
    "log-reply-text": log_text(header(), TASK, {"event": "reply", "index": 1, "turn": 1,
                                                "reply": "hello"}).encode(),
    "log-turn-text": log_text(header(), TASK, {"event": "reply", "index": 1, "turn": "one",
                                               "reply": REPLY}).encode(),
    "log-usage-text": log_text(header(), TASK, {"event": "reply", "index": 1, "turn": 1, "reply": {
        **REPLY, "usage": {"type": "usage", "input_tokens": "many"}}}).encode(),
    "log-result-number": log_text(header(), TASK, {"event": "call_end", "call_id": "c",
                                                   "result": 7}).encode(),
    "log-stop-number": log_text(header(), TASK, {"event": "stop", "stop": 5, "turns": 1,
                                                 "notes": []}).encode(),
    "log-notes-number": log_text(header(), TASK, {"event": "stop", "stop": "answered",
                                                  "turns": 1, "notes": 5}).encode(),
    "log-line-not-an-object": log_text(header(), TASK).encode() + b"[1, 2]\n",
    "log-media-file-missing": log_text(header(), {**TASK, "message": {
        "type": "message", "role": "user", "parts": [{"type": "media", "kind": "image",
                                                      "media_type": "image/png", "size": 9000,
                                                      "file": "0" * 64 + ".png"}]}}).encode(),
    "log-media-file-outside": log_text(header(), {**TASK, "message": {
        "type": "message", "role": "user", "parts": [{"type": "media", "kind": "image",
                                                      "media_type": "image/png",
                                                      "file": "../../etc/passwd"}]}}).encode(),
    "cassette-media-file-missing": json.dumps({"toolwire_cassette": 2, "interactions": [{
        "request": {"method": "POST", "path": "/v1/messages", "headers": {}, "media": True,
                    "body": {"model": "m", "max_tokens": 5, "messages": [{"role": "user",
                             "content": [{"type": "image", "source": {
                                 "type": "base64", "media_type": "image/png",
                                 "data": {"toolwire_media": "1" * 64 + ".png"}}}]}]}},
        "response": {"status": 200, "headers": {}, "body": {}}}]}).encode(),
    "cassette-interaction-number": b'{"toolwire_cassette": 1, "interactions": [5]}',
    "cassette-request-number": b'{"toolwire_cassette": 1, "interactions": [{"request": 5}]}',
    "openai-call-function-number": json.dumps({"model": "m", "messages": [
        {"role": "assistant", "tool_calls": [{"id": "c", "function": 5}]}]}).encode(),
}


@dataclass
class Place:
    """A folder to build a case in, with the files every case may use."""

    root: Path

    def bad_file(self, kind: str, suffix: str = ".json") -> str:
        path = self.root / f"bad-{kind}{suffix}"
        data = BAD_FILES[kind]
        if kind == "folder":
            path.mkdir()
        elif data is not None:
            path.write_bytes(data)
        return str(path)

    def file(self, name: str, text: str) -> str:
        path = self.root / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    @property
    def request(self) -> str:
        return self.file("request.json", json.dumps(
            {"model": "m", "max_tokens": 10, "system": "s",
             "messages": [{"role": "user", "content": "hi"}]}))

    @property
    def log(self) -> str:
        return self.file("run.jsonl", VALID_LOG)

    @property
    def tasks(self) -> str:
        return self.file("tasks.jsonl", '{"id": 1, "prompt": "hi"}\n')

    @property
    def script(self) -> str:
        return self.file("script.json", '{"replies": [{"text": "hi"}]}')

    @property
    def work(self) -> str:
        folder = self.root / "work"
        folder.mkdir(exist_ok=True)
        return str(folder)


Case = Callable[[Place], list[str]]
CASES: dict[str, Case] = {}


def case(name: str, build: Case) -> None:
    assert name not in CASES, name
    CASES[name] = build


# ---------------------------------------------------------------- files a command reads

READERS: dict[str, Callable[[Place, str], list[str]]] = {
    "explain": lambda p, f: ["explain", f],
    "explain --json": lambda p, f: ["explain", f, "--json"],
    "convert": lambda p, f: ["convert", f, "--to", "openai-chat"],
    "check": lambda p, f: ["check", f],
    "resume": lambda p, f: ["resume", f, "--workdir", p.work, "--approve", "never"],
    "resume --model": lambda p, f: ["resume", f, "--model", MODEL, "--workdir", p.work],
    "batch": lambda p, f: ["batch", f, "--model", MODEL, "--out", str(p.root / "r.jsonl")],
    "emulate --script": lambda p, f: ["emulate", "--script", f],
    "replay": lambda p, f: ["replay", f, "--workdir", p.work],
    "chat --resume": lambda p, f: ["chat", "--resume", f, "--workdir", p.work],
}
for reader, build in READERS.items():
    for kind in BAD_FILES:
        case(f"{reader} <{kind}>", lambda p, b=build, k=kind: b(p, p.bad_file(k)))  # type: ignore[misc]
for kind in ("missing", "folder", "binary", "non-utf8", "empty", "not-json", "json-of-no-wire",
             "log-newer-format"):
    case(f"mcp-serve <tools file {kind}>",
         lambda p, k=kind: ["mcp-serve", p.bad_file(k, ".py") + ":TOOLS"])  # type: ignore[misc]

# ---------------------------------------------------------------- files a command writes

WRITERS: dict[str, Callable[[Place, str], list[str]]] = {
    "run --log": lambda p, out: ["run", "x", "--model", MODEL, "--workdir", p.work, "--log", out],
    "explain --html": lambda p, out: ["explain", p.request, "--html", out],
    "batch --out": lambda p, out: ["batch", p.tasks, "--model", MODEL, "--out", out],
    "chat --log": lambda p, out: ["chat", "--model", MODEL, "--workdir", p.work, "--log", out],
    "run --record": lambda p, out: ["run", "x", "--model", MODEL, "--workdir", p.work,
                                    "--record", out],
}
OUTPUTS: dict[str, Callable[[Place], str]] = {
    "in a missing folder": lambda p: str(p.root / "nowhere" / "out.txt"),
    "under a file": lambda p: str(Path(p.request) / "out.txt"),
    "an existing empty folder": lambda p: p.bad_file("folder"),
    "an existing non-empty folder": lambda p: str(Path(p.work).parent),
}
for writer, build in WRITERS.items():
    for name, where in OUTPUTS.items():
        case(f"{writer} <{name}>", lambda p, b=build, w=where: b(p, w(p)))  # type: ignore[misc]
case("run --log <holds a run>", lambda p: WRITERS["run --log"](p, p.log))
for kind in ("binary", "non-utf8", "not-json", "json-of-no-wire", "json-nested-too-deep"):
    case(f"batch --out <existing {kind}>",
         lambda p, k=kind: WRITERS["batch --out"](p, p.bad_file(k)))  # type: ignore[misc]
case("batch --out <a batch_job line without its requests>", lambda p: WRITERS["batch --out"](
    p, p.file("r.jsonl", '{"batch_job": "batch_1", "requests": 5}\n')))
case("batch --runs <a file>", lambda p: ["batch", p.tasks, "--model", MODEL, "--out",
                                         str(p.root / "r.jsonl"), "--runs", p.request])

# ---------------------------------------------------------------- files attached to a task

ATTACHMENTS: dict[str, Callable[[Place], str]] = {
    "missing": lambda p: str(p.root / "chart.png"),
    "a folder": lambda p: p.work,
    "unreadable": lambda p: str(Path(p.request) / "chart.png"),  # under a file: ENOTDIR
    "unsupported": lambda p: p.file("notes.png", "a text file named like an image\n"),
    "empty": lambda p: p.bad_file("empty", ".pdf"),
}
for name, where in ATTACHMENTS.items():
    case(f"run --attach <{name}>", lambda p, w=where: [  # type: ignore[misc]
        *NUMBER_FLAGS["run"][0](p), "--attach", w(p)])
case("run --attach <one good, one missing>", lambda p: [
    *NUMBER_FLAGS["run"][0](p), "--attach", p.bad_file("binary", ".png"),
    "--attach", str(p.root / "gone.pdf")])
case("run --attach <no file>", lambda p: [*NUMBER_FLAGS["run"][0](p), "--attach"])
WRONG_TYPES = {  # each field of an emulate script item, with a value of the wrong type
    "delay": {"text": "a", "delay": "soon"}, "retry_after": {"fault": "rate_limit",
                                                               "retry_after": "later"},
    "interval": {"raw": "x", "interval": "fast"}, "status": {"raw": "x", "status": "200"},
    "usage": {"text": "a", "usage": "lots"}, "usage count": {"text": "a", "usage": {
        "input_tokens": "many"}},
    "tool_calls": {"tool_calls": 3}, "tool call": {"tool_calls": [7]},
    "tool call name": {"tool_calls": [{"name": 5}]}, "tool call id": {"tool_calls": [
        {"name": "f", "id": 1}]}, "tool call arguments": {"tool_calls": [
            {"name": "f", "arguments": [1]}]}, "tool call raw_arguments": {"tool_calls": [
                {"name": "f", "raw_arguments": 1}]},
    "text": {"text": ["a"]}, "stop": {"text": "a", "stop": 1}, "message": {
        "fault": "server_error", "message": 5}, "exception": {"fault": "rate_limit",
                                                              "exception": 5},
    "raw": {"raw": 5}, "raw_chunks": {"raw_chunks": "ab"}, "drop": {"raw": "x", "drop": "yes"},
    "reply": {"fault": "rate_limit", "reply": "hi"},
}
for field_name, item in WRONG_TYPES.items():
    case(f"emulate --script <{field_name} of the wrong type>", lambda p, i=item: [  # type: ignore[misc]
        "emulate", "--script", p.file("s.json", json.dumps([i]))])
for kind in ("missing", "folder", "binary", "non-utf8", "empty"):
    case(f"run --task-file <{kind}>", lambda p, k=kind: [  # type: ignore[misc]
        "run", "--task-file", p.bad_file(k, ".txt"), "--model", MODEL, "--workdir", p.work])
case("run <TASK and --task-file>", lambda p: [
    "run", "x", "--task-file", p.file("t.txt", "do it"), "--model", MODEL, "--workdir", p.work])
case("run <an empty TASK>", lambda p: ["run", " ", "--model", MODEL, "--workdir", p.work])
case("run <no TASK>", lambda p: ["run", "--model", MODEL, "--workdir", p.work])
case("runs --workdir <missing>", lambda p: ["runs", "--workdir", str(p.root / "nowhere")])
case("runs --workdir <a file>", lambda p: ["runs", "--workdir", p.file("f.txt", "x")])
case("runs --json <with a value>", lambda p: ["runs", "--json=yes"])
case("run --task-file <no file>", lambda p: ["run", "--model", MODEL, "--task-file"])

# ---------------------------------------------------------------- folders

FOLDER_TAKERS: dict[str, Callable[[Place, str], list[str]]] = {
    "run": lambda p, d: ["run", "x", "--model", MODEL, "--workdir", d],
    "resume": lambda p, d: ["resume", p.log, "--workdir", d],
    "demo": lambda p, d: ["demo", "--workdir", d],
    "mcp-serve": lambda p, d: ["mcp-serve", "--builtin", "coding", "--workdir", d],
    "replay": lambda p, d: ["replay", p.log, "--workdir", d],
    "chat": lambda p, d: ["chat", "--model", MODEL, "--workdir", d],
}
FOLDERS: dict[str, Callable[[Place], str]] = {
    "a file": lambda p: p.request,
    "missing": lambda p: str(p.root / "nowhere" / "deeper"),
}
for taker, build in FOLDER_TAKERS.items():
    for name, where in FOLDERS.items():
        case(f"{taker} --workdir <{name}>", lambda p, b=build, w=where: b(p, w(p)))  # type: ignore[misc]
case("demo --workdir <not empty>", lambda p: ["demo", "--workdir", str(Path(p.work).parent)])

# ---------------------------------------------------------------- ports

PORT_TAKERS: dict[str, Callable[[Place, str], list[str]]] = {
    "emulate": lambda p, n: ["emulate", "--script", p.script, "--port", n],
    "mcp-serve http": lambda p, n: ["mcp-serve", "--builtin", "coding", "--workdir", p.work,
                                    "--transport", "http", "--port", n],
    "proxy": lambda p, n: ["proxy", "--model", MODEL, "--port", n],
}
for taker, build in PORT_TAKERS.items():
    for port in ("99999", "-1", "eighty", "in-use"):
        case(f"{taker} --port <{port}>", lambda p, b=build, n=port: b(p, n))  # type: ignore[misc]

# ---------------------------------------------------------------- model ids

MODEL_TAKERS: dict[str, Callable[[Place, str], list[str]]] = {
    "run": lambda p, m: ["run", "x", "--model", m, "--workdir", p.work],
    "resume": lambda p, m: ["resume", p.log, "--model", m, "--workdir", p.work],
    "demo": lambda p, m: ["demo", "--model", m, "--workdir", str(p.root / "demo")],
    "batch": lambda p, m: ["batch", p.tasks, "--model", m, "--out", str(p.root / "r.jsonl")],
    "chat": lambda p, m: ["chat", "--model", m, "--workdir", p.work],
    "proxy": lambda p, m: ["proxy", "--model", m],
}
BAD_MODELS = {
    "unknown": "claude-5", "no model": "anthropic:", "not a URL": "anthropic:m@ftp://x",
    "port 99999": "anthropic:m@http://127.0.0.1:99999", "no host": "anthropic:m@http://",
    "missing key": "anthropic:claude-x", "unknown provider": "acme:m@http://127.0.0.1:9",
    "unknown local model": "local:giant",
}
for taker, build in MODEL_TAKERS.items():
    for name, model in BAD_MODELS.items():
        case(f"{taker} --model <{name}>", lambda p, b=build, m=model: b(p, m))  # type: ignore[misc]

FALLBACK_TAKERS: dict[str, Callable[[Place, str], list[str]]] = {
    "run": lambda p, m: ["run", "x", "--model", MODEL, "--fallback", m, "--workdir", p.work],
    "resume": lambda p, m: ["resume", p.log, "--fallback", m, "--workdir", p.work],
    "batch": lambda p, m: ["batch", p.tasks, "--model", MODEL, "--fallback", m, "--out",
                           str(p.root / "r.jsonl")],
    "chat": lambda p, m: ["chat", "--model", MODEL, "--fallback", m, "--workdir", p.work],
}
for taker, build in FALLBACK_TAKERS.items():
    for name, model in BAD_MODELS.items():
        case(f"{taker} --fallback <{name}>", lambda p, b=build, m=model: b(p, m))  # type: ignore[misc]
    case(f"{taker} --fallback <no id>",  # type: ignore[misc]
         lambda p, b=build: [*b(p, MODEL), "--fallback"])
    case(f"{taker} --fallback-sticky <without --fallback>",  # type: ignore[misc]
         lambda p, b=build: [a for a in b(p, "") if a not in ("--fallback", "")]
         + ["--fallback-sticky"])
case("batch --fallback <with --ray>", lambda p: [*FALLBACK_TAKERS["batch"](p, MODEL), "--ray"])
case("run --fallback-sticky <with a value>", lambda p: [*FALLBACK_TAKERS["run"](p, MODEL),
                                                        "--fallback-sticky=yes"])

# ---------------------------------------------------------------- numbers

NUMBER_FLAGS: dict[str, tuple[Callable[[Place], list[str]], list[str], tuple[str, ...]]] = {
    "run": (lambda p: ["run", "x", "--model", MODEL, "--workdir", p.work],
            ["--max-turns"], ("0", "-1", "many", "1.5")),
    "resume": (lambda p: ["resume", p.log, "--workdir", p.work], ["--max-turns"],
               ("0", "-1", "many")),
    "demo": (lambda p: ["demo", "--workdir", str(p.root / "demo")], ["--max-turns"],
             ("0", "-1", "many")),
    "batch": (lambda p: ["batch", p.tasks, "--model", MODEL, "--out", str(p.root / "r.jsonl")],
              ["--max-turns", "--concurrency", "--token-budget", "--ray-cpus"],
              ("0", "-1", "many")),
}
for taker, (build, flags, values) in NUMBER_FLAGS.items():
    for flag in flags:
        for value in values:
            case(f"{taker} {flag} <{value}>",
                 lambda p, b=build, f=flag, v=value: [*b(p), f, v])  # type: ignore[misc]
for value in ("0", "-2", "nan", "inf", "soon"):
    case(f"batch --time-limit <{value}>", lambda p, v=value: [  # type: ignore[misc]
        *NUMBER_FLAGS["batch"][0](p), "--time-limit", v])
    case(f"batch --ray-cpus-per-run <{value}>", lambda p, v=value: [  # type: ignore[misc]
        *NUMBER_FLAGS["batch"][0](p), "--ray-cpus-per-run", v])
for taker in ("run", "resume"):
    for flag in ("--max-seconds", "--idle-seconds"):
        for value in ("0", "-2", "nan", "inf", "soon"):
            case(f"{taker} {flag} <{value}>", lambda p, t=taker, f=flag, v=value: [  # type: ignore[misc]
                *NUMBER_FLAGS[t][0](p), f, v])
    for flag in ("--max-body", "--max-decoded", "--max-line", "--max-error-body"):
        for value in ("0", "-5", "big", "12 parsecs", "0.1"):
            case(f"{taker} {flag} <{value}>", lambda p, t=taker, f=flag, v=value: [  # type: ignore[misc]
                *NUMBER_FLAGS[t][0](p), f, v])
for value in ("0", "-2", "nan", "inf", "soon"):
    for flag in ("--max-wait", "--poll"):
        case(f"batch --provider-batch {flag} <{value}>", lambda p, f=flag, v=value: [  # type: ignore[misc]
            *NUMBER_FLAGS["batch"][0](p), "--provider-batch", f, v])
for name, model in {"bedrock": "bedrock:anthropic.claude-sonnet-4-5-v1:0",
                    "bedrock-anthropic": "bedrock-anthropic:anthropic.claude-sonnet-4-5-v1:0",
                    "vertex": "vertex:gemini-2.5-flash", "ollama": "ollama:qwen3",
                    "openrouter": "openrouter:openai/gpt-4o"}.items():
    case(f"batch --provider-batch --model <{name}>", lambda p, m=model: [  # type: ignore[misc]
        "batch", p.tasks, "--model", m, "--out", str(p.root / "r.jsonl"), "--provider-batch"])
for name, extra in {
    "--provider-batch with --ray": ["--provider-batch", "--ray"],
    "--max-wait without --provider-batch": ["--max-wait", "60"],
    "--poll without --provider-batch": ["--poll", "5"],
    "--finish-live without --provider-batch": ["--finish-live"],
    "--finish-live without --max-wait": ["--provider-batch", "--finish-live"],
    "--provider-batch with --fallback": ["--provider-batch", "--fallback", "openai:gpt-4o"],
}.items():
    case(f"batch <{name}>", lambda p, e=extra: [*NUMBER_FLAGS["batch"][0](p), *e])  # type: ignore[misc]
for value in ("0", "-2", "nan", "inf", "soon"):
    case(f"proxy --timeout <{value}>", lambda p, v=value: [  # type: ignore[misc]
        "proxy", "--model", MODEL, "--timeout", v])
    case(f"proxy --record-max <{value}>", lambda p, v=value: [  # type: ignore[misc]
        "proxy", "--model", MODEL, "--record", str(p.root / "records"), "--record-max", v])
for value in ("0", "-1", "many", "1.5"):
    case(f"proxy --workers <{value}>", lambda p, v=value: [  # type: ignore[misc]
        "proxy", "--model", MODEL, "--workers", v])
for value in ("-1", "nan", "inf", "warm"):
    case(f"run --temperature <{value}>", lambda p, v=value: [  # type: ignore[misc]
        *NUMBER_FLAGS["run"][0](p), "--temperature", v])

# ---------------------------------------------------------------- choices

for name, args in {
    "convert --to": lambda p: ["convert", p.request, "--to", "smoke-signals"],
    "convert --from": lambda p: ["convert", p.request, "--to", "openai-chat", "--from", "x"],
    "check --wire": lambda p: ["check", p.request, "--wire", "x"],
    "demo --wire": lambda p: ["demo", "--wire", "x"],
    "demo scenario": lambda p: ["demo", "juggle"],
    "run --approve": lambda p: [*NUMBER_FLAGS["run"][0](p), "--approve", "maybe"],
    "run --tools": lambda p: [*NUMBER_FLAGS["run"][0](p), "--tools", "all"],
    "mcp-serve --transport": lambda p: ["mcp-serve", "--builtin", "coding", "--transport", "x"],
    "no such command": lambda p: ["fly"],
    "run without a task": lambda p: ["run"],
    "convert without --to": lambda p: ["convert", p.request],
    "config action": lambda p: ["config", "edit"],
    "run --color": lambda p: [*NUMBER_FLAGS["run"][0](p), "--color", "loud"],
    "resume --color": lambda p: ["resume", p.log, "--color", "sometimes"],
    "demo --color": lambda p: ["demo", "--color", "pink"],
    "run --sandbox": lambda p: [*NUMBER_FLAGS["run"][0](p), "--sandbox", "docker"],
    "resume --sandbox": lambda p: ["resume", p.log, "--sandbox", "maybe"],
    "demo --sandbox": lambda p: ["demo", "--sandbox", "strict"],
    "run --sandbox landlock": lambda p: [*NUMBER_FLAGS["run"][0](p), "--sandbox", "Landlock"],
    "resume --sandbox landlock": lambda p: ["resume", p.log, "--sandbox", "land-lock"],
    "run --reasoning": lambda p: [*NUMBER_FLAGS["run"][0](p), "--reasoning", "extreme"],
    "resume --reasoning": lambda p: ["resume", p.log, "--reasoning", "max"],
    "chat --reasoning": lambda p: ["chat", "--model", MODEL, "--reasoning", "deep"],
    "replay --wire": lambda p: ["replay", p.log, "--wire", "carrier-pigeon"],
    "replay --sandbox": lambda p: ["replay", p.log, "--sandbox", "maybe"],
    "replay without a log": lambda p: ["replay"],
    "resume --trust-record <with a value>": lambda p: ["resume", p.log, "--trust-record=yes"],
    "replay --trust-record <with a value>": lambda p: ["replay", p.log, "--trust-record=1"],
    "chat --trust-record <with a value>": lambda p: ["chat", "--resume", p.log,
                                                     "--trust-record=no"],
    "run --log <inside the workspace, unconfined>": lambda p: [
        "run", "task", "--model", MODEL, "--workdir", p.work, "--sandbox", "off", "--log",
        str(p.root / "work" / "run.jsonl")],
    "run --record <inside the workspace, unconfined>": lambda p: [
        "run", "task", "--model", MODEL, "--workdir", p.work, "--sandbox", "off", "--record",
        str(p.root / "work" / "run.cassette.json")],
    "chat --approve": lambda p: ["chat", "--model", MODEL, "--approve", "sometimes"],
    "chat --tools": lambda p: ["chat", "--model", MODEL, "--tools", "every"],
    "chat --color": lambda p: ["chat", "--model", MODEL, "--color", "plaid"],
}.items():
    case(f"{name} <not a choice>", args)

# ---------------------------------------------------------------- sandbox and decisions

for name, args in {
    "run --allow-network <with a value>": lambda p: [*NUMBER_FLAGS["run"][0](p),
                                                     "--allow-network=yes"],
    "run --pass-env <no name>": lambda p: [*NUMBER_FLAGS["run"][0](p), "--pass-env"],
    "resume --allow <a call not waiting>": lambda p: ["resume", p.log, "--allow", "call_9"],
    "resume --deny <a call not waiting>": lambda p: ["resume", p.log, "--deny", "call_9",
                                                     "--reason", "no"],
    "resume --deny <no id>": lambda p: ["resume", p.log, "--deny"],
    "resume --reason <no text>": lambda p: ["resume", p.log, "--reason"],
    "run --stream <with a value>": lambda p: [*NUMBER_FLAGS["run"][0](p), "--stream=yes"],
    "run --no-stream <with a value>": lambda p: [*NUMBER_FLAGS["run"][0](p), "--no-stream=1"],
    "resume --tools <not a choice>": lambda p: ["resume", p.log, "--tools", "all"],
    "chat <--resume and --log both>": lambda p: ["chat", "--resume", p.log, "--log",
                                                 str(p.root / "new.jsonl")],
    "run <--reasoning with --temperature>": lambda p: [*NUMBER_FLAGS["run"][0](p),
                                                       "--reasoning", "high",
                                                       "--temperature", "0.5"],
    "chat <--reasoning with --temperature>": lambda p: ["chat", "--model", MODEL,
                                                        "--reasoning", "low",
                                                        "--temperature", "1"],
    "chat --max-turns <0>": lambda p: ["chat", "--model", MODEL, "--max-turns", "0"],
    "chat --temperature <-1>": lambda p: ["chat", "--model", MODEL, "--temperature", "-1"],
    "replay <a log with no reply>": lambda p: ["replay", p.log, "--workdir", p.work],
    "replay <--in-place with --workdir>": lambda p: ["replay", p.file(
        "w.jsonl", log_text(header(context={"workdir": p.work}), TASK, {
            "event": "reply", "t": 1.0, "index": 1, "turn": 1, "reply": REPLY})),
        "--workdir", p.work, "--in-place"],
    "replay --in-place <with a value>": lambda p: ["replay", p.log, "--in-place=yes"],
    "replay <a log whose sandbox setting is unknown>": lambda p: ["replay", p.file(
        "s.jsonl", log_text(header(context={"sandbox": "docker"}), TASK, {
            "event": "reply", "t": 1.0, "index": 1, "turn": 1, "reply": REPLY})),
        "--workdir", p.work],
    "replay <a log that names no folder>": lambda p: ["replay", p.file("r.jsonl", log_text(
        header(), TASK, {"event": "reply", "t": 1.0, "index": 1, "turn": 1, "reply": REPLY}))],
    "replay <a cassette at a path no wire serves>": lambda p: ["replay", p.file(
        "c.json", json.dumps({"toolwire_cassette": 1, "interactions": [{"request": {
            "method": "POST", "path": "/nowhere", "body": {}}, "response": {}}]})),
        "--workdir", p.work],
    "replay <a cassette whose interaction is a number>": lambda p: ["replay", p.file(
        "n.json", json.dumps({"toolwire_cassette": 1, "interactions": [3]})),
        "--workdir", p.work],
    "replay <an object that is neither log nor cassette>": lambda p: ["replay", p.file(
        "o.jsonl", "{}\n"), "--workdir", p.work],
    "proxy --host <not loopback, no --key>": lambda p: ["proxy", "--model", MODEL, "--host",
                                                       "0.0.0.0"],
    "proxy --key <empty>": lambda p: ["proxy", "--model", MODEL, "--key", " "],
    "proxy --host <an address not here>": lambda p: ["proxy", "--model", MODEL, "--host",
                                                     "203.0.113.7", "--key", "k"],
    "proxy --record <a file>": lambda p: ["proxy", "--model", MODEL, "--record", p.request],
    "proxy --record <in a missing folder>": lambda p: ["proxy", "--model", MODEL, "--record",
                                                       str(p.root / "no" / "records")],
    "proxy --model <local without a server>": lambda p: ["proxy", "--model", "local:smollm2"],
    "proxy without --model": lambda p: ["proxy"],
    "proxy <--pass-client-keys with --key>": lambda p: ["proxy", "--model", MODEL,
                                                        "--pass-client-keys", "--key", "k"],
    "proxy --pass-client-keys <with a value>": lambda p: ["proxy", "--model", MODEL,
                                                          "--pass-client-keys=yes"],
    "proxy --route <no =>": lambda p: ["proxy", "--model", MODEL, "--route", "claude-*"],
    "proxy --route <no pattern>": lambda p: ["proxy", "--model", MODEL, "--route", "=" + MODEL],
    "proxy --route <a bad model id>": lambda p: ["proxy", "--model", MODEL, "--route",
                                                 "claude-*=claude-5"],
    "proxy --route <a missing key>": lambda p: ["proxy", "--model", MODEL, "--route",
                                                "gpt-*=openai:gpt-5"],
    "proxy --fallback <a bad model id>": lambda p: ["proxy", "--model", MODEL, "--fallback",
                                                    "claude-5"],
    "proxy --fallback <a missing key>": lambda p: ["proxy", "--model", MODEL, "--fallback",
                                                   "openai:gpt-5"],
    "proxy --fallback <the --model itself>": lambda p: ["proxy", "--model", MODEL,
                                                        "--fallback", MODEL],
    "proxy --fallback <no value>": lambda p: ["proxy", "--model", MODEL, "--fallback"],
    "proxy --aws-key-id <no secret in the environment>": lambda p: [
        "proxy", "--model", MODEL, "--aws-key-id", "AKIAEXAMPLE"],
    "proxy --aws-key-id <empty>": lambda p: ["proxy", "--model", MODEL, "--aws-key-id", ""],
    "proxy --aws-key-id <with a slash>": lambda p: ["proxy", "--model", MODEL,
                                                      "--aws-key-id", "AKIA/2026"],
    "resume <a log whose tool set is unknown>": lambda p: ["resume", p.file(
        "t.jsonl", log_text(header(context={"tools": "everything"}), TASK))],
}.items():
    case(name, args)

# ---------------------------------------------------------------- decisions for a waiting run

for name, flags in {"--allow a call that is not waiting": ["--allow", "call_x"],
                    "--deny a call that is not waiting": ["--deny", "call_x", "--reason", "no"],
                    "--allow without an id": ["--allow"]}.items():
    case(f"resume <{name}>", lambda p, f=flags: [  # type: ignore[misc]
        "resume", p.log, "--workdir", p.work, *f])

# ---------------------------------------------------------------- wrong --from

ANTHROPIC_BODY = {"model": "m", "max_tokens": 10, "messages": [
    {"role": "user", "content": "weather?"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "w",
                                       "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                  "content": "sun"}]}]}
for wire in ("openai-chat", "openai-responses", "ollama-chat", "gemini-generate"):
    case(f"convert --from <{wire} for an anthropic body>", lambda p, w=wire: [  # type: ignore[misc]
        "convert", p.file("a.json", json.dumps(ANTHROPIC_BODY)), "--to", "openai-chat",
        "--from", w])

# ---------------------------------------------------------------- MCP servers and tools modules

for name, server in {"a missing program": "/nonexistent/mcp-server --stdio",
                     "nothing listening": f"{CLOSED}/mcp",
                     "a program that exits": f"{sys.executable} -c pass",
                     "an empty command": " "}.items():
    case(f"run --mcp <{name}>", lambda p, s=server: [  # type: ignore[misc]
        *NUMBER_FLAGS["run"][0](p), "--approve", "auto", "--mcp", s])
    case(f"run --mcp-deferred <{name}>", lambda p, s=server: [  # type: ignore[misc]
        *NUMBER_FLAGS["run"][0](p), "--approve", "auto", "--mcp-deferred", s])
case("mcp-serve --ask-user <with a value>", lambda p: ["mcp-serve", "--builtin", "coding",
                                                      "--ask-user=yes"])
case("run --mcp-deferred <no server>", lambda p: [*NUMBER_FLAGS["run"][0](p), "--mcp-deferred"])
case("run --mcp-resources <with a value>", lambda p: [*NUMBER_FLAGS["run"][0](p),
                                                      "--mcp-resources=yes"])
case("run --mcp-instructions <with a value>", lambda p: [*NUMBER_FLAGS["run"][0](p),
                                                         "--mcp-instructions=all"])

for name, header_text in {"no colon": "Authorization Bearer x",
                          "a space in the name": "X Team: blue",
                          "an empty value": "X-Team:",
                          "a control character": "X-Team: a\x01b"}.items():
    case(f"run --mcp-header <{name}>", lambda p, h=header_text: [  # type: ignore[misc]
        *NUMBER_FLAGS["run"][0](p), "--approve", "auto", "--mcp", f"{CLOSED}/mcp",
        "--mcp-header", h])
case("run --mcp-header <without --mcp>", lambda p: [*NUMBER_FLAGS["run"][0](p),
                                                    "--mcp-header", "X-Team: blue"])
case("run --mcp-header <with a command server only>", lambda p: [
    *NUMBER_FLAGS["run"][0](p), "--mcp", "python -m some_server", "--mcp-header", "X-Team: b"])
case("run --mcp-header <nothing listening>", lambda p: [
    *NUMBER_FLAGS["run"][0](p), "--approve", "auto", "--mcp", f"{CLOSED}/mcp",
    "--mcp-header", "Authorization: Bearer not-a-token-anyone-takes"])
for name, token in {"too short": "short", "with a space": "a token with spaces in it",
                    "with a control character": "abcdefghijklmnop\x07q"}.items():
    case(f"mcp-serve --token <{name}>", lambda p, t=token: [  # type: ignore[misc]
        "mcp-serve", "--builtin", "coding", "--transport", "http", "--token", t])
case("mcp-serve --token <over stdio>", lambda p: [
    "mcp-serve", "--builtin", "coding", "--token", "a-long-enough-token-0123456789"])
case("mcp-serve --host <not loopback, no --token>", lambda p: [
    "mcp-serve", "--builtin", "coding", "--transport", "http", "--host", "0.0.0.0"])
case("mcp-serve --token <no value>", lambda p: ["mcp-serve", "--builtin", "coding", "--token"])
AS = ["--authorization-server", "https://as.example/", "--introspection-url",
      "https://as.example/introspect", "--resource-url", "http://127.0.0.1:8000/mcp"]
case("mcp-serve --authorization-server <alone>", lambda p: [
    "mcp-serve", "--builtin", "coding", "--transport", "http", *AS[:2]])
case("mcp-serve --scope <without an authorization server>", lambda p: [
    "mcp-serve", "--builtin", "coding", "--transport", "http", "--scope", "files"])
case("mcp-serve --authorization-server <not a URL>", lambda p: [
    "mcp-serve", "--builtin", "coding", "--transport", "http", "--authorization-server",
    "as.example", *AS[2:]])
case("mcp-serve --authorization-server <over stdio>", lambda p: [
    "mcp-serve", "--builtin", "coding", *AS])
case("mcp-serve --authorization-server <with --token>", lambda p: [
    "mcp-serve", "--builtin", "coding", "--transport", "http", *AS, "--token",
    "a-long-enough-token-0123456789"])
case("mcp-serve --resource-url <not a URL>", lambda p: [
    "mcp-serve", "--builtin", "coding", "--transport", "http", *AS[:4], "--resource-url",
    "/mcp"])
case("mcp <no subcommand>", lambda p: ["mcp"])
case("mcp <unknown subcommand>", lambda p: ["mcp", "signin", f"{CLOSED}/mcp"])
case("mcp login <not a URL>", lambda p: ["mcp", "login", "python -m some_server"])
case("mcp login <no URL>", lambda p: ["mcp", "login"])
case("mcp login <nothing listening>", lambda p: ["mcp", "login", f"{CLOSED}/mcp",
                                                 "--timeout", "5"])
case("mcp login --redirect-port <99999>", lambda p: ["mcp", "login", f"{CLOSED}/mcp",
                                                     "--redirect-port", "99999"])
case("mcp login --redirect-port <word>", lambda p: ["mcp", "login", f"{CLOSED}/mcp",
                                                    "--redirect-port", "eighty"])
case("mcp login --timeout <0>", lambda p: ["mcp", "login", f"{CLOSED}/mcp", "--timeout", "0"])
case("mcp login --client-secret-env <unset>", lambda p: [
    "mcp", "login", f"{CLOSED}/mcp", "--client-id", "c", "--client-secret-env",
    "NO_SUCH_VARIABLE_FOR_A_SECRET"])
case("mcp logout <not a URL>", lambda p: ["mcp", "logout", "weather"])
case("mcp logout <no URL>", lambda p: ["mcp", "logout"])

TOOL_MODULES = {
    "raises at import": "raise RuntimeError('no config file')\n",
    "bad syntax": "def broken(:\n",
    "no TOOLS": "x = 1\n",
    "TOOLS is a number": "TOOLS = 5\n",
    "TOOLS holds numbers": "TOOLS = [1, 2]\n",
    "TOOLS is a function that raises": "def TOOLS():\n    raise ValueError('boom')\n",
    "TOOLS is a string": "TOOLS = 'read_file'\n",
}
for name, source in TOOL_MODULES.items():
    case(f"mcp-serve <tools module {name}>", lambda p, s=source: [  # type: ignore[misc]
        "mcp-serve", p.file("my_tools.py", s) + ":TOOLS"])
for name, target in {"missing module": "no_such_module_xyz:TOOLS", "too many colons": "a:b:c",
                     "attribute missing": "json:NO_SUCH", "not tools": "json:dumps"}.items():
    case(f"mcp-serve <target {name}>", lambda p, t=target: ["mcp-serve", t])  # type: ignore[misc]


# ---------------------------------------------------------------- running the cases


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def arguments(name: str, root: Path, busy: int) -> list[str]:
    return [str(busy) if a == "in-use" else a for a in CASES[name](Place(root))]


def run_main(argv: list[str]) -> int:
    """``main(argv)`` in a thread, given 60 seconds: a command that serves instead of refusing
    fails here instead of hanging the suite."""
    outcome: list[object] = []

    def target() -> None:
        try:
            outcome.append(main(argv))
        except SystemExit as exc:  # argparse's own errors
            outcome.append(exc.code)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(60)
    assert outcome, f"toolwire {' '.join(argv)} did not return within 60 s"
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return int(outcome[0])  # type: ignore[call-overload]


def assert_one_message(err: str, argv: list[str]) -> None:
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ": error: " in ln]
    assert len(errors) == 1, (argv, err)
    if not lines[0].startswith("usage:"):  # argparse shows the usage above its one line
        assert lines == errors, (argv, err)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_one_message_and_exit_2(name: str, tmp_path: Path, busy_port: int,
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if k.endswith("_API_KEY")]:
        monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    argv = arguments(name, tmp_path, busy_port)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    code = run_main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (argv, out, err)
    assert_one_message(err, argv)
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert after == before, f"a refused command left files behind: {set(after) - set(before)}"


def test_the_corpus_covers_every_command() -> None:
    from toolwire.cli.app import build_parser

    parser = build_parser()
    commands = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    covered = {name.split()[0] for name in CASES}
    assert commands <= covered, commands - covered
    assert len(CASES) > 300


# ---------------------------------------------------------------- real subprocesses


def toolwire(args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
             ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], capture_output=True,
                          text=True, env=env or ENV, timeout=120, cwd=cwd)


SUBPROCESS_CASES = [
    "resume <missing>", "explain <folder>", "check <binary>", "convert <non-utf8>",
    "batch <log-usage-text>", "explain <log-tools-not-a-list>", "run --log <in a missing folder>",
    "explain --html <an existing empty folder>", "emulate --port <99999>",
    "emulate --port <in-use>", "mcp-serve http --port <in-use>", "run --model <port 99999>",
    "demo --model <missing key>", "batch --max-turns <0>", "run --max-turns <0>",
    "batch --out <in a missing folder>", "mcp-serve <tools module raises at import>",
    "convert --from <openai-chat for an anthropic body>", "demo --workdir <not empty>",
    "run --mcp <a missing program>", "run --attach <unsupported>",
    "run --mcp-deferred <a program that exits>", "batch --provider-batch --model <bedrock>",
    "proxy --port <in-use>", "proxy --host <not loopback, no --key>",
    "mcp login <nothing listening>", "mcp-serve --host <not loopback, no --token>",
]


def test_ray_client_address_without_the_client_names_its_pip_line(tmp_path: Path) -> None:
    (tmp_path / "TASKS").write_text('{"id": 1, "prompt": "hi"}\n')
    argv = ["batch", "TASKS", "--model", MODEL, "--out", "r.jsonl", "--ray", "ray://127.0.0.1:9"]
    proc = toolwire(argv, env=blocked(tmp_path, "grpc"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert_one_message(proc.stderr, argv)
    assert "pip install 'ray[client]'" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["TASKS", "blocked"]


def blocked(root: Path, *modules: str) -> dict[str, str]:
    """An environment whose Python cannot import ``modules``, as if they were not installed."""
    for module in modules:
        folder = root / "blocked" / module
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text(f"raise ImportError('no module named {module}')\n")
    path = [str(root / "blocked"), *filter(None, ENV.get("PYTHONPATH", "").split(os.pathsep))]
    return {**ENV, "PYTHONPATH": os.pathsep.join(path)}


def test_through_real_subprocesses(tmp_path: Path, busy_port: int) -> None:
    def one(name: str) -> tuple[str, list[str], subprocess.CompletedProcess[str]]:
        root = tmp_path / name.replace(" ", "_").replace("/", "_")
        root.mkdir()
        argv = arguments(name, root, busy_port)
        return name, argv, toolwire(argv, cwd=root)

    with ThreadPoolExecutor(max_workers=4) as pool:
        done = list(pool.map(one, SUBPROCESS_CASES))
    for _, argv, proc in done:
        assert proc.returncode == 2, (argv, proc.stdout, proc.stderr)
        assert_one_message(proc.stderr, argv)


@pytest.mark.parametrize(("argv", "extra"), [
    (["mcp-serve", "--builtin", "coding"], "mcp"),
    (["run", "x", "--model", MODEL, "--mcp", "python -m server"], "mcp"),
    (["run", "x", "--model", MODEL, "--mcp-deferred", "python -m server"], "mcp"),
    (["batch", "TASKS", "--model", MODEL, "--out", "r.jsonl", "--ray"], "ray"),
    (["run", "x", "--model", MODEL, "--otel"], "otel"),
    (["batch", "TASKS", "--model", MODEL, "--out", "r.jsonl", "--otel"], "otel"),
    (["proxy", "--model", MODEL], "proxy"),
])
def test_a_missing_extra_names_its_pip_line(tmp_path: Path, argv: list[str], extra: str) -> None:
    (tmp_path / "TASKS").write_text('{"id": 1, "prompt": "hi"}\n')
    blocked_env = blocked(tmp_path, "mcp", "ray", "opentelemetry", "uvicorn")
    proc = toolwire(argv, env=blocked_env, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert_one_message(proc.stderr, argv)
    assert (f"pip install 'toolwire[{extra}]'" in proc.stderr
            or f'pip install "toolwire[{extra}]"' in proc.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["TASKS", "blocked"]


def test_an_internal_error_is_one_line_naming_the_traceback_file(tmp_path: Path) -> None:
    """A command that fails in a way no check foresaw (here: a check command whose rules
    module is broken) exits 3 with one line; the traceback is in the file it names."""
    code = ("import sys, toolwire.rules as rules\n"
            "def broken(*a, **k):\n    raise RuntimeError('a bug in the rules')\n"
            "rules.check_transcript = broken\n"
            "from toolwire.cli.app import main\nsys.exit(main(sys.argv[1:]))\n")
    body = tmp_path / "req.json"
    body.write_text(json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
    proc = subprocess.run([sys.executable, "-c", code, "check", str(body)], capture_output=True,
                          text=True, env={**ENV, "TMPDIR": str(tmp_path)}, timeout=60)
    assert proc.returncode == 3
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert lines[0].startswith("toolwire check: internal error (RuntimeError)")
    assert "report it" in lines[0]
    crash = next(tmp_path.glob("toolwire-crash-*.txt"))
    assert str(crash) in lines[0]
    text = crash.read_text()
    assert "Traceback" in text and "a bug in the rules" in text and f"check {body}" in text


# ---------------------------------------------------------------- the config file

BAD_CONFIGS: dict[str, bytes | None] = {
    "not TOML": b"model = \n",
    "unknown key": b'model = "anthropic:m"\ncolour = "never"\n',
    "approve not a choice": b'approve = "maybe"\n',
    "model a number": b"model = 5\n",
    "color not a choice": b'color = "loud"\n',
    "sandbox not a choice": b'sandbox = "docker"\n',
    "non-utf8": 'model = "caf\xe9"\n'.encode("latin-1"),
    "a folder": None,
    "max_body not a size": b'max_body = "huge"\n',
    "mcp_read_only not a choice": b'mcp_read_only = "trust"\n',
    "max_line zero": b"max_line = 0\n",
    "max_seconds negative": b"max_seconds = -3\n",
    "idle_seconds a table": b"[idle_seconds]\nx = 1\n",
    "nested too deep": b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n",
    "model with a carriage return": b'model = "anthropic:m@http://127.0.0.1:9\\r/x"\n',
    "mcp not a table": b'mcp = "yes"\n',
}
CONFIG_READERS: dict[str, Callable[[Place], list[str]]] = {
    "run": lambda p: ["run", "x", "--workdir", p.work],
    "resume": lambda p: ["resume", p.log, "--workdir", p.work],
    "batch": lambda p: ["batch", p.tasks, "--out", str(p.root / "r.jsonl")],
    "config show": lambda p: ["config", "show"],
}


@pytest.mark.parametrize("reader", sorted(CONFIG_READERS))
@pytest.mark.parametrize("kind", sorted(BAD_CONFIGS))
def test_a_bad_config_file_is_one_message_and_exit_2(
        reader: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.toml"
    data = BAD_CONFIGS[kind]
    if data is None:
        config.mkdir()
    else:
        config.write_bytes(data)
    monkeypatch.setenv("TOOLWIRE_CONFIG", str(config))
    for key in ("TOOLWIRE_MODEL", "TOOLWIRE_APPROVE", "TOOLWIRE_COLOR", "NO_COLOR"):
        monkeypatch.delenv(key, raising=False)
    argv = CONFIG_READERS[reader](Place(tmp_path))
    before = files_in(tmp_path)
    assert run_main(argv) == 2
    err = capsys.readouterr().err
    assert_one_message(err, argv)
    assert str(config) in err
    assert files_in(tmp_path) == before


def files_in(folder: Path) -> list[Path]:
    return sorted(p.relative_to(folder) for p in folder.rglob("*"))


def test_the_exit_codes_are_documented_where_people_look() -> None:
    """Each code is in every command's --help epilog and in the README's exit-code table."""
    import re

    from toolwire.cli import common

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    table = readme.split("### Exit codes", 1)[1].split("\n\n", 2)[1]
    rows = re.findall(r"^\| (\d+) \| (.+) \|$", table, flags=re.MULTILINE)
    codes = sorted(v for k, v in vars(common).items() if k.startswith("EXIT_"))
    assert [int(code) for code, _ in rows] == codes and codes == [0, 1, 2, 3, 4, 141]
    assert "traceback" in rows[3][1] and "never a traceback" in rows[2][1]
    epilog = " ".join(common.EPILOG.split())
    for code in codes:
        assert f"{code} " in epilog
    assert "3 an internal error" in epilog


# ---------------------------------------------------------------- every value of a body broken

BODIES = {
    "anthropic-messages": {
        "model": "m", "max_tokens": 5, "system": "s",
        "tools": [{"name": "n", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "t", "signature": "s"},
            {"type": "tool_use", "id": "t", "name": "n", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                          "content": "x"}]}]},
    "openai-chat": {
        "model": "m", "tools": [{"type": "function", "function": {"name": "n", "parameters": {}}}],
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "n", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": "x"}]},
    "gemini-generate": {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]},
                     {"role": "model", "parts": [{"functionCall": {"name": "n", "args": {}}}]}],
        "tools": [{"functionDeclarations": [{"name": "n"}]}]},
}


def broken(value: object) -> Iterator[object]:
    """``value`` with one of its parts (itself included) swapped for a value of another type."""
    yield from (5, None, [], "s")
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from ({**value, key: b} for b in broken(inner))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from ([*value[:i], b, *value[i + 1:]] for b in broken(inner))


@pytest.mark.parametrize("wire", sorted(BODIES))
def test_a_body_with_any_value_of_the_wrong_type_is_never_an_internal_error(
        wire: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each part of a request body in turn given the wrong type: check and convert answer (0,
    1 or 2), never exit 3 or a traceback."""
    path = tmp_path / "body.json"
    count = 0
    for body in broken(BODIES[wire]):
        path.write_text(json.dumps(body))
        for argv in (["check", str(path)], ["convert", str(path), "--to", "openai-responses"]):
            code = run_main(argv)
            err = capsys.readouterr().err
            assert code in (0, 1, 2) and "Traceback" not in err, (body, argv, err)
            count += 1
    assert count > 100


# ---------------------------------------------------------------- a sandbox mode that cannot run


@pytest.mark.parametrize(("mode", "said"), [("landlock", "Landlock was required"),
                                            ("required", "a sandbox was required")])
@pytest.mark.parametrize("command", ["run", "resume"])
def test_a_sandbox_mode_that_cannot_run_here_is_one_message_and_exit_2(
        mode: str, said: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLWIRE_BWRAP", str(tmp_path / "no-bwrap"))
    monkeypatch.setenv("TOOLWIRE_LANDLOCK", "off")
    monkeypatch.chdir(tmp_path)
    place = Place(tmp_path)
    argv = ([*NUMBER_FLAGS["run"][0](place), "--sandbox", mode] if command == "run"
            else ["resume", place.log, "--workdir", place.work, "--sandbox", mode])
    before = sorted(tmp_path.rglob("*"))
    assert run_main(argv) == 2
    _, err = capsys.readouterr()
    assert_one_message(err, argv)
    assert said in err and ("TOOLWIRE_LANDLOCK=off" in err or "no-bwrap" in err), err
    assert sorted(tmp_path.rglob("*")) == before
