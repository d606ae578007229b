"""A gateway's cost: `toolwire proxy` between a client and its upstream, next to LiteLLM's proxy
on the same upstream, in the same run.

The upstream is toolwire's emulator speaking OpenAI Chat Completions, in a process of its own,
answering every request with the same short text (streamed as Chat Completions streams are).
Each gateway runs in a process of its own, one worker, logging nothing, with the same key
that every client presents:

- ``direct``: the client calls the upstream itself (the baseline);
- ``toolwire same wire``: an OpenAI Chat Completions client through `toolwire proxy` (its bytes
  pass unchanged);
- ``toolwire across``: an Anthropic Messages client through `toolwire proxy` (each request and
  each streamed event converted);
- ``litellm``: an OpenAI Chat Completions client through LiteLLM's proxy
  (``litellm --config``), its model pointed at the same upstream.

The client is one asyncio process with httpx2, one connection pool sized to the concurrency.
Figures per gateway: the time a whole reply takes and the time to a stream's first byte, one
request at a time (p50 and p99 over ``--requests``), each minus the direct figure (what the
gateway adds); streams completed per second with 1, 100 and 1,000 in flight (requests that
failed are counted and named); the gateway process's peak resident memory.

Run: ``python bench/proxy.py`` (``--quick`` for fewer requests and levels 1 and 100;
``--litellm PATH`` names the ``litellm`` command of another environment, since its proxy
extra pulls in much that toolwire's does not). A peer that is not installed is reported so.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import serve_emulator, table

KEY = "sk-bench-0123456789abcdef0123456789abcdef"
"""The key every gateway is started with and every client presents (LiteLLM's proxy will not
start without one)."""
TEXT = "The weather in Rome is sunny and warm, about twenty-four degrees. " * 2
LEVELS = (1, 100, 1000)


# ------------------------------------------------------------------ the upstream process


def serve() -> None:
    """The emulator answering every request with `TEXT`; prints its port, serves until stdin
    closes."""
    from toolwire.transcript import Message, Reply, Request, Usage

    usage = Usage(input_tokens=20, output_tokens=30)

    def respond(request: Request, wire: str) -> Reply:
        return Reply(message=Message.assistant(TEXT), usage=usage)

    serve_emulator(respond)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(url: str, proc: subprocess.Popen[bytes], seconds: float = 120) -> None:
    import httpx2

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: the gateway exited with {proc.returncode}")
        try:
            httpx2.get(url + "/health", timeout=2)
            return
        except httpx2.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(f"{url}: the gateway did not start in {seconds:.0f} s")


def peak_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


# ------------------------------------------------------------------ the requests

CHAT = {"model": "m", "messages": [{"role": "user", "content": "Weather in Rome?"}]}
MESSAGES = {"model": "m", "max_tokens": 200,
            "messages": [{"role": "user", "content": "Weather in Rome?"}]}


class Case:
    def __init__(self, name: str, url: str, path: str, body: dict[str, Any],
                 headers: dict[str, str], pid: int | None) -> None:
        self.name, self.url, self.path, self.body = name, url, path, body
        self.headers, self.pid = headers, pid


async def one(client: Any, case: Case, stream: bool) -> tuple[float, float]:
    """One request: (seconds to the first byte of the body, seconds to its end)."""
    began = time.perf_counter()
    first = None
    async with client.stream("POST", case.url + case.path, json={**case.body, "stream": stream},
                             headers=case.headers) as reply:
        if reply.status_code != 200:
            raise RuntimeError(f"status {reply.status_code}: {(await reply.aread())[:200]!r}")
        async for _ in reply.aiter_raw():
            if first is None:
                first = time.perf_counter() - began
    end = time.perf_counter() - began
    return (first if first is not None else end), end


def load_client(in_flight: int, timeout: float) -> Any:
    """The client every case is measured with: httpx2 over toolwire's plain HTTP/1.1
    connections. httpx2's own pool is the bound above a few hundred connections (about 55
    streams a second at 1,000 in flight against this upstream, for every gateway alike), and
    a load generator must not be what is measured."""
    import httpx2

    from toolwire.http.plain import Http1Transport

    lean = Http1Transport(max_connections=in_flight, keepalive_expiry=120)
    return httpx2.AsyncClient(timeout=timeout, mounts={"http://": lean})


async def sequential(case: Case, n: int, stream: bool) -> list[tuple[float, float]]:
    async with load_client(1, 60) as client:
        for _ in range(5):  # warm-up: connections made, caches filled
            await one(client, case, stream)
        return [await one(client, case, stream) for _ in range(n)]


async def throughput(case: Case, in_flight: int, total: int) -> tuple[float, int, str]:
    """Streams completed per second with ``in_flight`` at once, the failures, the first
    failure's words."""
    failures: list[str] = []
    async with load_client(in_flight, 120) as client:
        queue = iter(range(total))

        async def worker() -> None:
            for _ in queue:
                try:
                    await one(client, case, True)
                except Exception as exc:  # counted and named, never hidden
                    failures.append(f"{type(exc).__name__}: {exc}"[:160])

        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(in_flight)))
        took = time.perf_counter() - began
    return (total - len(failures)) / took, len(failures), failures[0] if failures else ""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# ------------------------------------------------------------------ the gateways


def start_toolwire(upstream: str) -> tuple[str, subprocess.Popen[bytes]]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "toolwire.cli", "proxy", "--model",
                             f"openai:m@{upstream}", "--port", str(port), "--key", KEY],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "OPENAI_API_KEY": "unused"})
    url = f"http://127.0.0.1:{port}"
    wait_ready(url, proc)
    return url, proc


def start_litellm(command: str, upstream: str, folder: Path
                  ) -> tuple[str, subprocess.Popen[bytes]]:
    port = free_port()
    config = folder / "litellm.yaml"
    config.write_text(json.dumps({"model_list": [{"model_name": "m", "litellm_params": {
        "model": "openai/m", "api_base": upstream + "/v1", "api_key": "unused"}}],
        "litellm_settings": {"telemetry": False, "drop_params": True}}))
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR",
           "LITELLM_MASTER_KEY": KEY}
    proc = subprocess.Popen([command, "--config", str(config), "--port", str(port),
                             "--num_workers", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                            cwd=folder)
    url = f"http://127.0.0.1:{port}"
    wait_ready(url, proc, 300)
    return url, proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer requests; 1 and 100")
    parser.add_argument("--requests", type=int, help="one-at-a-time requests per case")
    parser.add_argument("--litellm", default=shutil.which("litellm"),
                        help="the litellm command (default: the one on PATH)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve()
    n = args.requests or (100 if args.quick else 300)
    levels = (1, 100) if args.quick else LEVELS
    upstream_proc = subprocess.Popen([sys.executable, __file__, "--serve"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert upstream_proc.stdout is not None and upstream_proc.stdin is not None
    upstream = f"http://127.0.0.1:{upstream_proc.stdout.readline().strip()}"
    gateways: list[subprocess.Popen[bytes]] = []
    cases: list[Case] = [Case("direct", upstream, "/v1/chat/completions", CHAT,
                              {"authorization": "Bearer unused"}, None)]
    missing: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        try:
            url, proc = start_toolwire(upstream)
            gateways.append(proc)
            cases.append(Case("toolwire same wire", url, "/v1/chat/completions", CHAT,
                              {"authorization": f"Bearer {KEY}"}, proc.pid))
            cases.append(Case("toolwire across", url, "/v1/messages", MESSAGES,
                              {"x-api-key": KEY, "anthropic-version": "2023-06-01"},
                              proc.pid))
            if args.litellm:
                url, proc = start_litellm(args.litellm, upstream, Path(folder))
                gateways.append(proc)
                cases.append(Case("litellm", url, "/v1/chat/completions", CHAT,
                                  {"authorization": f"Bearer {KEY}"}, proc.pid))
            else:
                missing.append("litellm: not installed (pip install 'litellm[proxy]', or "
                               "give --litellm PATH)")
            report(cases, n, levels)
        finally:
            for proc in gateways:
                proc.terminate()
                proc.wait(timeout=30)
            upstream_proc.stdin.close()
            upstream_proc.wait(timeout=30)
    for line in missing:
        print(line)


def report(cases: list[Case], n: int, levels: tuple[int, ...]) -> None:
    run: Callable[..., Any] = asyncio.run
    latency: dict[str, dict[str, float]] = {}
    for case in cases:
        whole = [end for _, end in run(sequential(case, n, False))]
        firsts = [first for first, _ in run(sequential(case, n, True))]
        latency[case.name] = {"whole50": pct(whole, .5), "whole99": pct(whole, .99),
                              "first50": pct(firsts, .5), "first99": pct(firsts, .99)}
    base = latency["direct"]
    print(f"{n} requests one at a time per case; the upstream answers {len(TEXT)} characters "
          "(streamed in Chat Completions chunks)\n")
    rows = []
    for case in cases:
        got = latency[case.name]
        added = {k: (got[k] - base[k]) * 1000 for k in got}
        rows.append([case.name, *(f"{got[k] * 1000:.2f}" for k in got),
                     *(("-",) * 4 if case.name == "direct" else
                       (f"{added[k]:+.2f}" for k in got))])
    print(table(["case", "whole p50 ms", "whole p99 ms", "first byte p50 ms",
                 "first byte p99 ms", "added p50", "added p99", "added first p50",
                 "added first p99"], rows))
    print()
    found: dict[tuple[str, int], tuple[float, int, str]] = {}
    for level in levels:
        for case in cases:
            found[case.name, level] = run(throughput(case, level, max(200, 3 * level)))
    rows = []
    for case in cases:
        cells = [case.name]
        for level in levels:
            rate, failed, _ = found[case.name, level]
            cells.append(f"{rate:.0f}" + (f" ({failed} failed)" if failed else ""))
        peak = peak_kib(case.pid) if case.pid else None
        cells.append(f"{peak / 1024:.0f}" if peak else "-")
        rows.append(cells)
    print(table(["case", *(f"streams/s at {lv}" for lv in levels), "peak MB"], rows))
    errors = [f"{c}@{lv}: {first}" for (c, lv), (_, failed, first) in found.items() if failed]
    for line in errors:
        print("first failure", line)
    names = [c.name for c in cases]
    if "litellm" in names:
        print()
        for name in ("toolwire same wire", "toolwire across"):
            ratios = ", ".join(
                f"{found[name, lv][0] / found['litellm', lv][0]:.1f}x at {lv}"
                for lv in levels if found["litellm", lv][0])
            print(f"{name} throughput against litellm: {ratios}")


if __name__ == "__main__":
    main()
