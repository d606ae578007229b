"""A long campaign of hostile input against every decoder of every wire (not run in CI).

Run: ``python bench/fuzz.py [--count N] [--seed S]`` (default 1,000,000 inputs, seed 13).

Each input goes to one decoder (``decode_response``, ``decode_request``, ``decode_error`` or
the stream decoder, its bytes split at random) of one wire, both drawn at random: arbitrary
JSON values and Python objects, recorded bodies from ``tests/fixtures/corpus`` (and what each
codec writes) with keys deleted or renamed and values retyped, nulled, made huge or nested
10,000 deep, and real streams with events mutated, bytes flipped, junk inserted and the whole
cut short. The mutation engine is the property tests' (``tests/hostile.py``).

Prints the inputs tried, the outcomes by kind (``value``; each toolwire error class; ``net:``
for a toolwire error the codecs' last net made of another exception, which names no path;
``escape:`` for any other exception, the contract's breach), the slowest input, and the first
few inputs that escaped or reached the net. Target: no escapes, no net.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.setrecursionlimit(1_000)  # the interpreter's default, whatever the caller set

from hostile import DECODERS, WIRES, hostile_input, outcome, run_decoder, shown  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1_000_000, help="inputs to try")
    parser.add_argument("--seed", type=int, default=13, help="the campaign's random seed")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    outcomes: collections.Counter[str] = collections.Counter()
    by_target: collections.Counter[tuple[str, str]] = collections.Counter()
    bad: list[tuple[str, str, str, str]] = []
    slowest = (0.0, "", "", "")
    started = time.perf_counter()
    for n in range(1, args.count + 1):
        wire, decoder = rng.choice(WIRES), rng.choice(DECODERS)
        value = hostile_input(rng, wire, decoder)
        split_rng = random.Random(rng.random())
        t0 = time.perf_counter()
        result = outcome(lambda: run_decoder(wire, decoder, value, split_rng))  # noqa: B023
        took = time.perf_counter() - t0
        outcomes[result] += 1
        by_target[(wire, decoder)] += 1
        if took > slowest[0]:
            slowest = (took, wire, decoder, shown(value))
        if result.startswith(("escape:", "net:")) and len(bad) < 10:
            bad.append((result, wire, decoder, shown(value)))
        if n % 100_000 == 0:
            print(f"... {n:,} inputs, {time.perf_counter() - started:.0f} s", flush=True)
    elapsed = time.perf_counter() - started
    print(f"inputs tried: {args.count:,} (seed {args.seed}) in {elapsed:.0f} s, "
          f"{1e6 * elapsed / args.count:.0f} µs each on average")
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
    return 1 if escapes else 0


if __name__ == "__main__":
    raise SystemExit(main())
