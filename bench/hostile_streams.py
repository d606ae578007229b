"""Stream decoding cost for one thing grown in many small deltas, on every wire.

Run: ``python bench/hostile_streams.py [--n N] [--rounds R]`` (default n = 2,000, 3 rounds).

Every case of ``tests/long_streams.py`` (a text, reasoning text or argument string sent in
8-character deltas; many calls, blocks or items one after another) is decoded with n and with
10n deltas: its chunks fed one by one to the wire's stream decoder, then the reply assembled.
Printed per case: the median time for each, and their ratio. About 10 is linear; a decoder
that copied or searched everything before each delta would show 30 and more (and the ratio
grows with n).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from long_streams import CASES, Case
from toolwire.codecs import get_codec


def decode(case: Case, chunks: list[bytes]) -> float:
    """Seconds to decode ``chunks`` to the end."""
    start = time.perf_counter()
    decoder = get_codec(case.wire).stream_decoder()
    for chunk in chunks:
        decoder.feed(chunk)
    reply = decoder.finish()
    took = time.perf_counter() - start
    assert reply is not None
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2_000, help="deltas in the shorter stream")
    parser.add_argument("--rounds", type=int, default=3, help="timings per stream (median)")
    args = parser.parse_args()
    print(f"{'wire and case':40} {'n':>8} {'10n':>8}  10n/n")
    for case in CASES:
        small, large = case.make(args.n), case.make(10 * args.n)
        decode(case, small)  # first use: imports and caches
        t_small = statistics.median(decode(case, small) for _ in range(args.rounds))
        t_large = statistics.median(decode(case, large) for _ in range(args.rounds))
        print(f"{case.id:40} {1000 * t_small:6.1f}ms {1000 * t_large:6.0f}ms  "
              f"{t_large / t_small:5.1f}", flush=True)


if __name__ == "__main__":
    main()
