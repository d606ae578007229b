"""The ``toolwire`` command line. Thin: every command is a few library calls."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="toolwire",
        description="LLM tool calling done right on the wire.",
    )
    parser.add_argument("--version", action="version", version=f"toolwire {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    parser.parse_args(argv)
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
