"""Instructions per operation, counted by callgrind: figures that do not move with the machine's
load, so they can be checked on a busy machine.

Each case runs once to leave behind what a first run writes (compiled modules), then twice in
a fresh ``python -s -P`` under ``valgrind --tool=callgrind``, doing its operation ``--short``
and then ``--long`` times after the same set-up and a few warm-up operations; the difference of
the two totals over the difference of the counts is the cost of one operation, with the
interpreter's start, the imports and the set-up cancelled out. The interpreter is isolated as
``-I`` would isolate it (no user site, no script folder, no ``PYTHON*`` variable) but keeps the
fixed hash seed (``PYTHONHASHSEED=0``), which ``-I`` ignores, so a run gives the same figures
again.

The cases:

- ``loop turn``: one turn of the agent loop with a scripted model and a trivial tool (a model
  call, one tool call and its result), toolwire's `Agent` next to pydantic-ai's, averaged over
  turns ``--short`` to ``--long`` of one run, no run log;
- ``batch run``: one run of ``bench/scale.py``'s toolwire batch (`run_batch`, 10 runs in
  flight, five model calls a run with a ``lookup`` call in each of the first four, run logs and
  results file written) against that benchmark's emulator in another process, not counted;
  a warm-up batch of 20 runs first, then ``--short`` and ``--long`` runs in one batch (the
  figures of bench/README.md were counted with ``--short 10 --long 70``);
- ``model call``: one whole request through the transport (`HttpModel.complete` of a
  six-message conversation with two tools, over loopback to an emulator in another process
  that is not counted), next to bare httpx2 posting the same body and parsing the reply;
- ``encode WIRE`` and ``decode WIRE``: `encode_request` of the 20-message tool transcript of
  ``bench/codecs.py``, and `decode_response` of a two-call reply from its bytes, per wire;
- ``convert`` and ``reply``: ``bench/codecs.py``'s conversion next to LiteLLM (an OpenAI
  request made into an Anthropic body, an Anthropic reply made into a reply object);
- ``proxy first byte same wire`` and ``proxy first byte across``: `toolwire proxy`'s
  application driven through its ASGI interface in the counted process, in front of
  ``bench/proxy.py``'s emulator (a Chat Completions upstream in a process of its own, not
  counted), a streamed request of a Chat Completions client (same wire) or an Anthropic
  Messages client (across wires). Only the instructions from the application's call to the
  first chunk of the body it hands the server are counted: callgrind zeroes its counters when
  the case calls ``sys.getrefcount`` and writes them out when it calls
  ``sys.getswitchinterval`` (builtins nothing else in the process calls), and the figure is
  the sum of those windows; the rest of each stream runs to its end uncounted, so the
  upstream's connection is kept as a client that reads whole streams keeps it. The two calls
  are in every window, well under a thousand instructions, the same for every tree (the
  interpreter's symbols must be there for callgrind to find the two);
- ``proxy stream same wire`` and ``proxy stream across``: the same requests counted whole,
  to the stream's last chunk.

Run: ``python bench/instructions.py`` (``--cases PATTERN`` to run some, ``--short N --long N``,
``--src DIR`` to count another checkout's toolwire, such as an older commit's ``src``).
Peers that are not installed are listed as such. Needs valgrind.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from _common import installed, table

BENCH = Path(__file__).resolve().parent
TARGETS = {"convert": 20.0}
"""Least ratio of the peer's instructions to toolwire's."""

_LOAD = textwrap.dedent(f"""
    import asyncio, importlib.util, os, sys
    sys.path[:0] = [p for p in (os.environ.get("BENCH_SRC"), {str(BENCH)!r}) if p]

    def load(name):
        path = {str(BENCH)!r} + "/" + name + ".py"
        spec = importlib.util.spec_from_file_location("bench_" + name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
""")

_RUN_SYNC = """
for _ in range(3):
    op()
for _ in range(int(sys.argv[1])):
    op()
"""

_RUN_ASYNC = """
async def _main():
    for _ in range(3):
        await op()
    for _ in range(int(sys.argv[1])):
        await op()
    await close()
asyncio.run(_main())
"""

# The loop cases give `asyncio.run` a small result, not the run's: when SIGINT has Python's own
# handler (a count started from a terminal, not in the background), `asyncio.run` puts that
# handler back at its end, and the one it replaces is a partial holding the main task, whose
# repr (made for an error message that is then dropped) holds the task's result: the whole
# history's repr, which grows with the turns and was counted as part of each turn.

LOOP_TOOLWIRE = """
from toolwire import Agent, Tool
from toolwire.testing import ScriptedModel, call, reply
n = int(sys.argv[1])
replies = [reply(call("noop", {"x": i}, id=f"call_{i}")) for i in range(n)] + [reply("done")]
def noop(x: int) -> int:
    return x
agent = Agent(model=ScriptedModel(replies), tools=[Tool.from_function(noop, name="noop")],
              max_turns=n + 1)
async def run():  # a number as the task's result (see above)
    result = await agent.arun("go")
    return result.turns, str(result.stop)
turns, stop = asyncio.run(run())
assert turns == n + 1, stop
"""

LOOP_PYDANTIC_AI = """
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel
n = int(sys.argv[1])
turn = 0
def model(messages, info):
    global turn
    turn += 1
    if turn > n:
        return ModelResponse(parts=[TextPart("done")])
    return ModelResponse(parts=[ToolCallPart("noop", {"x": turn}, tool_call_id=f"call_{turn}")])
agent = Agent(FunctionModel(model))
@agent.tool_plain
def noop(x: int) -> int:
    return x
async def run():  # nothing as the task's result (see above)
    await agent.run("go")
asyncio.run(run())
assert turn == n + 1
"""

BATCH_TOOLWIRE = """
import os, tempfile
from pathlib import Path
scale = load("scale")
n, url = int(sys.argv[1]), os.environ["BENCH_SCALE_URL"]
async def batch(runs, start):
    with tempfile.TemporaryDirectory() as folder:
        lines = await scale.toolwire_runs(url, runs, 10, start, Path(folder))
    assert scale.answered(lines) == runs, lines[:1]
asyncio.run(batch(20, 10**6))
asyncio.run(batch(n, 0))
"""

CALL_TOOLWIRE = """
import os
from toolwire import model
request = load("transport").conversation()
tw = model("anthropic:claude-sonnet-4-5@" + os.environ["BENCH_URL"], env={})
op = lambda: tw.complete(request)
close = tw.aclose
"""

CALL_HTTPX2 = """
import json, os
import httpx2
from toolwire.codecs import get_codec
body = get_codec("anthropic-messages").encode_request(load("transport").conversation())
body["model"] = "claude-sonnet-4-5"
client = httpx2.AsyncClient(timeout=60)
url = os.environ["BENCH_URL"] + "/v1/messages"
headers = {"content-type": "application/json", "anthropic-version": "2023-06-01",
           "x-api-key": "k"}
async def op():
    resp = await client.post(url, content=json.dumps(body).encode(), headers=headers)
    return resp.json()
close = client.aclose
"""

PEER_CODEC_CASE = """
import os
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_TELEMETRY", "False")
op = load("codecs").litellm_cases()[{name!r}]
"""

CODEC_SETUP = """
import json
from typing import Any
from toolwire.codecs import get_codec
from toolwire.conversion import convert
from toolwire.transcript import (Message, Reply, Request, TextPart, ToolCallPart,
                                 ToolResultPart, ToolSpec, Usage)
TEXT_WIRES = ("openai-chat", "openai-responses")
Image = None
{workloads}

def decoding(codec, raw, request):
    try:  # from the bytes, as the client decodes; a toolwire that took only objects: parsed
        codec.decode_response(raw, request=request)
        return lambda: codec.decode_response(raw, request=request)
    except (TypeError, AttributeError):
        body = json.loads(raw)
        return lambda: codec.decode_response(body, request=request)
"""

ENCODE = """
codec, request = get_codec({wire!r}), transcript({wire!r})
op = lambda: codec.encode_request(request)
"""

DECODE = """
codec, request = get_codec({wire!r}), transcript({wire!r})
op = decoding(codec, json.dumps(codec.encode_response(two_calls({wire!r}), request=request))
              .encode(), request)
"""

CONVERT = """
body = openai_request()
op = lambda: convert(body, "openai-chat", "anthropic-messages")
"""

REPLY = """
request = get_codec("openai-chat").decode_request(openai_request())
op = decoding(get_codec("anthropic-messages"), json.dumps(ANTHROPIC_REPLY).encode(), request)
"""


PROXY = """
import json, os
os.environ.setdefault("OPENAI_API_KEY", "unused")
from toolwire.proxy import ProxySettings
from toolwire.proxy.app import make_app
KEY = "sk-bench-0123456789abcdef"
app = make_app(ProxySettings(model="openai:m@" + os.environ["BENCH_PROXY_URL"], key=KEY))
path, body, auth = {request!r}
raw = json.dumps({{**body, "stream": True}}).encode()
scope = {{"type": "http", "asgi": {{"version": "3.0"}}, "http_version": "1.1", "method": "POST",
         "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
         "root_path": "", "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
         "headers": [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json"),
                     (b"content-length", str(len(raw)).encode()),
                     *((k.encode(), v.replace("KEY", KEY).encode()) for k, v in auth)]}}
if {windows!r}:  # the window's marks (WINDOW_FLAGS)
    def opened():
        sys.getrefcount(None)
    first = sys.getswitchinterval
else:
    opened = first = tuple

async def op():
    done = asyncio.Event()
    asked, status, chunks = [], [], []

    async def receive():
        if not asked:
            asked.append(True)
            return {{"type": "http.request", "body": raw, "more_body": False}}
        await done.wait()
        return {{"type": "http.disconnect"}}

    async def send(message):
        if message["type"] == "http.response.start":
            status.append(message["status"])
            return
        if message.get("body"):
            if not chunks:
                first()
            chunks.append(message["body"])
        if not message.get("more_body"):
            done.set()

    opened()
    await app(scope, receive, send)
    assert status == [200] and chunks, (status, chunks)

close = app.transport.aclose
"""

PROXY_REQUESTS = {
    "same wire": ("/v1/chat/completions",
                  {"model": "m", "messages": [{"role": "user", "content": "Weather in Rome?"}]},
                  [("authorization", "Bearer KEY")]),
    "across": ("/v1/messages",
               {"model": "m", "max_tokens": 200,
                "messages": [{"role": "user", "content": "Weather in Rome?"}]},
               [("x-api-key", "KEY"), ("anthropic-version", "2023-06-01")]),
}
"""What ``bench/proxy.py`` sends on each path: (path, body, headers with the key as KEY)."""

WINDOW_FLAGS = ["--zero-before=sys_getrefcount", "--dump-before=sys_getswitchinterval"]
"""A window opens when the case calls ``sys.getrefcount`` (its C function) and closes, its
counts written to a file of its own, when it calls ``sys.getswitchinterval``."""


def workloads() -> str:
    """The workload builders of ``bench/codecs.py`` (its section between the workloads and
    the cases), so both benchmarks measure the same transcript and reply."""
    text = (BENCH / "codecs.py").read_text(encoding="utf-8")
    start = text.index("# " + "-" * 75 + " workloads")
    return text[start:text.index("# " + "-" * 75 + " cases")]


def cases() -> dict[str, tuple[str, str]]:
    """Each case: (its code, how it runs: ``sync``, ``async``, ``whole`` for code that does
    its own count of operations, or ``windows``, run as ``async`` with only its windows
    counted)."""
    from toolwire.codecs import WIRES

    found: dict[str, tuple[str, str]] = {
        "loop turn toolwire": (LOOP_TOOLWIRE, "whole"),
        "loop turn pydantic-ai": (LOOP_PYDANTIC_AI, "whole"),
        "batch run toolwire": (BATCH_TOOLWIRE, "whole"),
        "model call toolwire": (CALL_TOOLWIRE, "async"),
        "model call httpx2": (CALL_HTTPX2, "async"),
    }
    setup = CODEC_SETUP.format(workloads=workloads())
    for wire in WIRES:
        found[f"encode {wire}"] = (setup + ENCODE.format(wire=wire), "sync")
        found[f"decode {wire}"] = (setup + DECODE.format(wire=wire), "sync")
    found["convert toolwire"] = (setup + CONVERT, "sync")
    found["reply toolwire"] = (setup + REPLY, "sync")
    for task, label in (("request", "convert"), ("reply", "reply")):
        found[f"{label} litellm"] = (PEER_CODEC_CASE.format(name=f"litellm {task}"), "sync")
    for path, request in PROXY_REQUESTS.items():
        found[f"proxy first byte {path}"] = (PROXY.format(request=request, windows=True),
                                             "windows")
        found[f"proxy stream {path}"] = (PROXY.format(request=request, windows=False),
                                         "async")
    return found


PEERS = {"pydantic-ai": "pydantic_ai", "litellm": "litellm"}


def missing_peer(name: str) -> str | None:
    for peer, module in PEERS.items():
        if name.endswith(peer) and not installed(module):
            return module
    return None


def count(code: str, how: str, times: int, env: dict[str, str]) -> int:
    """The instructions callgrind counts for a fresh interpreter running ``code`` with its
    operation done ``times`` times."""
    script = _LOAD + code + {"sync": _RUN_SYNC, "async": _RUN_ASYNC, "whole": "",
                             "windows": _RUN_ASYNC}[how]
    # Isolated as -I would (no user site, no script folder, no PYTHON* variable), but with
    # the fixed hash seed: -I ignores PYTHONHASHSEED, and a random seed per process moves
    # every set's order and dict's collisions, so two counts of one program differed.
    env = {k: v for k, v in env.items() if not k.startswith("PYTHON") or k == "PYTHONHASHSEED"}
    with tempfile.TemporaryDirectory(prefix="toolwire-bench-") as folder:
        out = Path(folder) / "callgrind.out"
        flags = WINDOW_FLAGS if how == "windows" else []
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *flags,
             sys.executable, "-s", "-P", "-c", script, str(times)],
            capture_output=True, text=True, env=env)
        if proc.returncode != 0:  # the program's own last words, not valgrind's
            said = [ln for ln in proc.stderr.splitlines() if ln and not ln.startswith("==")]
            raise RuntimeError(said[-1] if said else "the case failed")
        if how == "windows":  # each window's file: out.1, out.2, ...; the last, the rest
            dumps = [part.read_text() for part in Path(folder).iterdir()]
            windows = [d for d in dumps if "\ndesc: Trigger: --dump-before=" in d]
            if len(windows) < times:
                raise RuntimeError(f"callgrind closed {len(windows)} windows of {times}")
            return sum(_total(d) for d in windows)
        return _total(out.read_text())


def _total(dump: str) -> int:
    """The instructions one callgrind file counts."""
    found = re.search(r"^(?:summary|totals): (\d+)", dump, re.M)
    if found is None:
        raise RuntimeError("callgrind wrote no total")
    return int(found.group(1))


def start_server(script: str = "transport.py") -> tuple[subprocess.Popen[str], str]:
    """The emulator of ``bench/SCRIPT`` in a process of its own, and its URL (it serves until
    it is killed)."""
    proc = subprocess.Popen([sys.executable, str(BENCH / script), "--serve"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if url.isdigit():  # bench/proxy.py's and bench/scale.py's print their port alone
        url = f"http://127.0.0.1:{url}"
    if not url.startswith("http://127.0.0.1:"):
        proc.kill()
        raise RuntimeError(f"the emulator did not start: {url!r}")
    return proc, url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="", help="run only the cases whose name has this")
    parser.add_argument("--short", type=int, default=10, help="operations in the first count")
    parser.add_argument("--long", type=int, default=30, help="operations in the second count")
    parser.add_argument("--src", help="measure the toolwire in this src folder (another "
                        "checkout) instead of the one installed")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("bench/instructions.py needs valgrind (Debian: apt-get install valgrind)")
    chosen = {k: v for k, v in cases().items() if args.cases in k}
    server, url = start_server()
    upstream, proxied = start_server("proxy.py") if any(
        k.startswith("proxy") for k in chosen) else (None, "")
    scaled, batch_url = start_server("scale.py") if any(
        k.startswith("batch") for k in chosen) else (None, "")
    env = {**os.environ, "PYTHONHASHSEED": "0", "BENCH_URL": url, "BENCH_PROXY_URL": proxied,
           "BENCH_SCALE_URL": batch_url}
    if args.src:
        env["BENCH_SRC"] = str(Path(args.src).resolve())
    per_op: dict[str, float] = {}
    rows = []
    try:
        for name, (code, how) in chosen.items():
            absent = missing_peer(name)
            if absent is not None:
                rows.append([name, "not installed", "", ""])
                continue
            used = env if "toolwire" in name or not name.endswith(tuple(PEERS)) else {
                k: v for k, v in env.items() if k != "BENCH_SRC"}  # a peer: today's bench code
            try:  # the first run writes the caches a first import leaves (.pyc files)
                count(code, how, 1, used)
            except RuntimeError as exc:  # an older toolwire without this wire, say
                rows.append([name, f"failed: {str(exc)[:60]}", "", ""])
                continue
            short, long = (count(code, how, n, used) for n in (args.short, args.long))
            per_op[name] = (long - short) / (args.long - args.short)
            rows.append([name, f"{per_op[name] / 1000:,.1f}K", f"{short:,}", f"{long:,}"])
    finally:
        for proc in (server, upstream, scaled):
            if proc is not None:
                proc.kill()
    print(table(["case", "instructions per op", f"total at {args.short}",
                 f"total at {args.long}"], rows))
    ratios = []
    for task in ("loop turn", "model call", "convert", "reply"):
        ours = per_op.get(f"{task} toolwire")
        for peer in ("pydantic-ai", "httpx2", "litellm"):
            theirs = per_op.get(f"{task} {peer}")
            if ours and theirs:
                target = TARGETS.get(task)
                ratios.append([task, peer, f"{theirs / ours:.2f}x",
                               "" if target is None else
                               ("met" if theirs / ours >= target else f"missed ({target}x)")])
    if ratios:
        print()
        print(table(["task", "peer", "peer / toolwire", "target"], ratios))


if __name__ == "__main__":
    main()
