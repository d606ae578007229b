"""``python -m toolwire.mcp``: serve toolwire tools as an MCP server (see `toolwire.mcp.cli`)."""

from __future__ import annotations

import sys

from toolwire.mcp.cli import main

if __name__ == "__main__":
    sys.exit(main())
