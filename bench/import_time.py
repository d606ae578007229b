"""Cold ``import toolwire`` next to the HTTP client it builds on and to peer libraries.

Every import runs in a fresh ``python -I`` process and is timed inside it with
``time.perf_counter`` (elapsed) and ``time.process_time`` (CPU); interpreter start-up is left
out. The libraries take turns in each round, the first round is thrown away, and the medians of
``--runs`` rounds are reported with their ratios to toolwire. Target: importing toolwire costs
no more than importing httpx2 alone.

Run: ``python bench/import_time.py`` (``--runs N``). Libraries that are not installed are
reported as such. litellm runs with ``LITELLM_LOCAL_MODEL_COST_MAP=True`` so that its import
reads the bundled price list instead of fetching one over the network.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import installed, interleaved, median, ratio, table

# (label, module to import)
LIBRARIES: list[tuple[str, str]] = [
    ("toolwire", "toolwire"),
    ("httpx2", "httpx2"),
    ("httpx", "httpx"),
    ("openai", "openai"),
    ("anthropic", "anthropic"),
    ("pydantic-ai", "pydantic_ai"),
    ("openai-agents", "agents"),
    ("litellm", "litellm"),
]
TARGET = "httpx2"
ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def version_of(module: str) -> str:
    dists = importlib.metadata.packages_distributions().get(module, [])
    for dist in dists:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed rounds (default 7)")
    args = parser.parse_args()

    present = {label: module for label, module in LIBRARIES if installed(module)}
    if "toolwire" not in present:
        sys.exit("toolwire is not importable: install it first (pip install -e .)")
    cases = {label: f"import {module}" for label, module in present.items()}
    times = interleaved(cases, runs=args.runs, env=ENV)
    wall = {label: median(t.wall for t in values) for label, values in times.items()}
    cpu = {label: median(t.cpu for t in values) for label, values in times.items()}

    rows = []
    for label, module in LIBRARIES:
        if label not in times:
            rows.append([label, module, "-", "not installed", "", "", ""])
            continue
        rows.append([
            label, module, version_of(module),
            f"{wall[label] * 1000:.1f}", f"{cpu[label] * 1000:.1f}",
            ratio(wall[label], wall["toolwire"]), ratio(cpu[label], cpu["toolwire"]),
        ])

    print(f"Cold import, median of {args.runs} fresh processes "
          f"(Python {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs)")
    print(table(["library", "module", "version", "wall ms", "cpu ms", "wall vs toolwire",
                 "cpu vs toolwire"], rows))
    if TARGET in times:
        met = "met" if wall["toolwire"] <= wall[TARGET] else "NOT met"
        print(f"target: import toolwire no slower than import {TARGET}: "
              f"{wall['toolwire'] * 1000:.1f} ms vs {wall[TARGET] * 1000:.1f} ms wall ({met})")


if __name__ == "__main__":
    main()
