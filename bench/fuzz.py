"""A long campaign of hostile input against every decoder of every wire (not run in CI).

Run: ``python bench/fuzz.py [--count N] [--seed S] [--runs R]`` (default 1,000,000 inputs, seed
13, no runs).

Each input goes to one decoder (``decode_response``, ``decode_request``, ``decode_error`` or
the stream decoder, its bytes split at random) of one wire, both drawn at random: arbitrary
JSON values and Python objects, recorded bodies from ``tests/fixtures/corpus`` (and what each
codec writes) with keys deleted or renamed and values retyped, nulled, made huge or nested
10,000 deep, and real streams with events mutated, bytes flipped, junk inserted and the whole
cut short. The mutation engine is the property tests' (``tests/hostile.py``).

Prints the inputs tried, the outcomes by kind (``value``; each toolwire error class; ``net:``
for a toolwire error the codecs' last net made of another exception, which names no path;
``escape:`` for any other exception, the contract's breach), the slowest input, and the first
few inputs that escaped or reached the net. Target: no escapes, no net. Stopped early (Ctrl-C or
SIGTERM), it prints the same for the inputs tried so far.

With ``--runs R``, R more hostile replies (a recorded reply mutated, or a recorded stream damaged
and split at random) are each served over loopback HTTP by the emulator, twice and then a good
answer, to a real ``Agent.arun`` on a wire drawn at random, streaming when the reply is a
stream. Printed: the runs' stops by name, the runs that raised (target 0), and the runs whose log
does not read back line by line, ending with the run's stop (target 0).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import random
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.setrecursionlimit(1_000)  # the interpreter's default, whatever the caller set

from bad_server import ANSWER, run_against  # noqa: E402
from hostile import (  # noqa: E402
    DECODERS,
    WIRES,
    hostile_input,
    mutate,
    mutate_stream,
    outcome,
    run_decoder,
    seeds,
    shown,
    split,
)
from toolwire.emulator import Raw  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1_000_000, help="inputs to try")
    parser.add_argument("--seed", type=int, default=13, help="the campaign's random seed")
    parser.add_argument("--runs", type=int, default=0,
                        help="hostile replies also served to a real Agent.run over loopback")
    args = parser.parse_args()
    for stop in (signal.SIGINT, signal.SIGTERM):  # also when started in the background
        signal.signal(stop, signal.default_int_handler)
    rng = random.Random(args.seed)
    outcomes: collections.Counter[str] = collections.Counter()
    by_target: collections.Counter[tuple[str, str]] = collections.Counter()
    bad: list[tuple[str, str, str, str]] = []
    slowest = (0.0, "", "", "")
    started = time.perf_counter()
    tried = 0
    try:
        for n in range(1, args.count + 1):
            wire, decoder = rng.choice(WIRES), rng.choice(DECODERS)
            value = hostile_input(rng, wire, decoder)
            split_rng = random.Random(rng.random())
            t0 = time.perf_counter()
            result = outcome(lambda: run_decoder(wire, decoder, value, split_rng))  # noqa: B023
            took = time.perf_counter() - t0
            outcomes[result] += 1
            by_target[(wire, decoder)] += 1
            tried = n
            if took > slowest[0]:
                slowest = (took, wire, decoder, shown(value))
            if result.startswith(("escape:", "net:")) and len(bad) < 10:
                bad.append((result, wire, decoder, shown(value)))
            if n % 100_000 == 0:
                print(f"... {n:,} inputs, {time.perf_counter() - started:.0f} s", flush=True)
    except KeyboardInterrupt:  # stopped early: the figures cover the inputs tried
        print(f"... stopped after {tried:,} inputs", flush=True)
    elapsed = time.perf_counter() - started
    print(f"inputs tried: {tried:,} (seed {args.seed}) in {elapsed:.0f} s, "
          f"{1e6 * elapsed / max(1, tried):.0f} µs each on average")
    print("per wire and decoder: " + ", ".join(
        f"{w} {d} {c:,}" for (w, d), c in sorted(by_target.items())))
    print("outcomes:")
    for kind, count in sorted(outcomes.items(), key=lambda item: -item[1]):
        print(f"  {kind:28} {count:>9,}")
    escapes = sum(c for k, c in outcomes.items() if k.startswith("escape:"))
    nets = sum(c for k, c in outcomes.items() if k.startswith("net:"))
    print(f"escapes: {escapes:,}; reached the last net: {nets:,}")
    took, wire, decoder, what = slowest
    print(f"slowest input: {1000 * took:.1f} ms, {wire} {decoder}: {what}")
    for result, wire, decoder, what in bad:
        print(f"  {result} {wire} {decoder}: {what}")
    raised = asyncio.run(agent_runs(rng, args.runs)) if args.runs else 0
    return 1 if escapes or raised else 0


def _served(value: Any) -> bytes:
    """A mutated reply as the bytes a server would send (nesting too deep for `json` as text)."""
    try:
        return json.dumps(value, allow_nan=True).encode("utf-8", "surrogatepass")
    except RecursionError:
        return b'{"a":' * 10_000 + b"1" + b"}" * 10_000


def _log_reads(log: Path, stop: str) -> bool:
    """Whether every line of ``log`` parses on its own and the last one is the run's stop."""
    try:
        events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    except (OSError, ValueError):
        return False
    return bool(events) and events[-1].get("event") == "stop" and events[-1].get("stop") == stop


async def agent_runs(rng: random.Random, count: int) -> int:
    """``count`` runs against hostile replies; prints what they did; the number that raised."""
    stops: collections.Counter[str] = collections.Counter()
    raised: list[str] = []
    unread = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for n in range(count):
            wire = rng.choice(WIRES)
            streamed = rng.random() < 0.5
            if streamed:
                bad = Raw(chunks=list(split(rng, mutate_stream(rng, rng.choice(
                    seeds(wire).streams)))))
            else:
                bad = Raw(body=_served(mutate(rng, rng.choice(seeds(wire).replies),
                                              objects=False)))
            log = Path(folder) / f"run-{n}.jsonl"
            try:
                result = await run_against(wire, [bad, bad, ANSWER, ANSWER], log,
                                           stream=streamed)
            except Exception as exc:  # the point is to name whatever escaped
                raised.append(f"{wire} {'stream' if streamed else 'whole'}: "
                              f"{type(exc).__name__}: {str(exc)[:200]}")
                continue
            stops[str(result.stop)] += 1
            unread += not _log_reads(log, str(result.stop))
    elapsed = time.perf_counter() - started
    print(f"Agent.run against hostile replies: {count:,} runs in {elapsed:.0f} s")
    print("  stops: " + ", ".join(f"{k} {v:,}" for k, v in stops.most_common()))
    print(f"  runs that raised: {len(raised):,}; logs that do not read back: {unread:,}")
    for line in raised[:10]:
        print(f"  raised: {line}")
    return len(raised) + unread


if __name__ == "__main__":
    raise SystemExit(main())
