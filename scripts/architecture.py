"""Draw the package's layers from the code: the import-linter layer contract in pyproject.toml
for the floors, and the real import graph (grimp) for the arrows between top-level parts.

    python scripts/architecture.py          # print the Mermaid picture
    python scripts/architecture.py --write  # put it into docs/architecture.md

docs/architecture.md holds the output between two marker lines, and tests/test_docs.py checks
that it is what this script draws from today's code, so the picture cannot drift.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- picture: drawn by scripts/architecture.py from the layer contract and the imports -->"
END = "<!-- end of picture -->"
# Everything imports these: drawing their arrows would hide the others.
FOUNDATION = {"transcript", "message_parts", "errors", "_json", "version", "events",
              "transcript_json", "protocol"}


def layers() -> list[list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c["id"] == "layers")
    return [[name.strip() for name in layer.split("|")] for layer in contract["layers"]]


def imports() -> set[tuple[str, str]]:
    import grimp

    graph = grimp.build_graph("toolwire", cache_dir=None)
    edges: set[tuple[str, str]] = set()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            a, b = (m.split(".")[1] if m.count(".") else "" for m in (module, imported))
            if a and b and a != b and b not in FOUNDATION:
                edges.add((a, b))
    return edges


def picture() -> str:
    floors = layers()
    lines = ["```mermaid", "flowchart TB"]
    for n, floor in enumerate(floors):
        lines.append(f'  subgraph L{n}[" "]')
        lines.append("    direction LR")
        lines.extend(f'    {name.strip("_")}["{name}"]' for name in floor)
        lines.append("  end")
    for a, b in sorted(imports()):
        lines.append(f"  {a.strip('_')} --> {b.strip('_')}")
    for n in range(len(floors) - 1):
        lines.append(f"  L{n} ~~~ L{n + 1}")
    lines.append("```")
    return "\n".join(lines)


def current_block(text: str) -> str:
    start = text.index(BEGIN) + len(BEGIN)
    return text[start:text.index(END)].strip()


def main() -> int:
    drawn = picture()
    if "--write" not in sys.argv[1:]:
        print(drawn)
        return 0
    text = DOC.read_text()
    start = text.index(BEGIN) + len(BEGIN)
    DOC.write_text(text[:start] + "\n" + drawn + "\n" + text[text.index(END):])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
