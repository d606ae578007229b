"""Stream framing cost per byte: one large event arriving in small chunks.

Run: ``python bench/framing.py [--rounds N]`` (default 5 rounds).

For the SSE and JSON-lines framers, one event of 64 KiB and one of 1 MiB are fed in 64-byte
chunks (and, for comparison, in one piece). Reported per byte of the event: the framer's own
count of bytes it scanned and copied (``scanned + copied``, machine-independent) and the median
time. Linear framing shows the same cost per byte for both sizes; quadratic framing would show
the 1 MiB event costing 16 times more per byte than the 64 KiB one.
"""

from __future__ import annotations

import argparse
import statistics
import time

from toolwire.codecs.framing import NDJSONFramer, SSEFramer

SIZES = (64 * 1024, 1024 * 1024)


def event(kind: str, size: int) -> bytes:
    return b"data: " + b"x" * size + b"\n\n" if kind == "sse" else b"x" * size + b"\n"


def run(kind: str, size: int, chunk: int) -> tuple[int, float]:
    """Bytes scanned and copied, and seconds, for one event fed in ``chunk``-byte pieces."""
    framer = SSEFramer() if kind == "sse" else NDJSONFramer()
    raw = event(kind, size)
    pieces = [raw[at:at + chunk] for at in range(0, len(raw), chunk)]
    start = time.perf_counter()
    out: list[object] = []
    for piece in pieces:
        out.extend(framer.feed(piece))
    took = time.perf_counter() - start
    assert len(out) == 1
    return framer.scanned + framer.copied, took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print("framer  event     chunks   work bytes/byte  ns/byte")
    for kind in ("sse", "ndjson"):
        for size in SIZES:
            for chunk in (64, size + 16):
                results = [run(kind, size, chunk) for _ in range(args.rounds)]
                work = results[0][0]
                seconds = statistics.median(t for _, t in results)
                label = "64 B" if chunk == 64 else "whole"
                print(f"{kind:7} {size // 1024:>5} KiB  {label:>6}  {work / size:15.2f}  "
                      f"{1e9 * seconds / size:7.2f}")


if __name__ == "__main__":
    main()
