"""MCP support: tools from MCP servers for an `Agent`, and toolwire tools served over MCP.

Needs the official ``mcp`` SDK (``pip install "toolwire[mcp]"``).

Client side: ``async with toolwire.mcp.connect("python -m my_server") as server:`` gives
``server.tools``, toolwire `Tool`s whose calls go to the server; `open_servers` opens several
servers at once and prefixes tool names that clash. A URL (``http://127.0.0.1:8000/mcp``)
connects over streamable HTTP instead of starting a command.

Server side: `build_server` makes an MCP server from toolwire tools, `serve_main` runs one over
stdio or streamable HTTP (``toolwire mcp-serve`` / ``python -m toolwire.mcp``).
"""

from __future__ import annotations

try:
    import mcp as _sdk  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "toolwire.mcp needs the MCP SDK: pip install \"toolwire[mcp]\" (or \"mcp>=2.0\")"
    ) from exc

from ._results import result_text
from .client import (
    McpConnection,
    McpConnectionError,
    Spec,
    atools_from_server,
    connect,
    tools_from_server,
)
from .group import McpTools, aopen_servers, open_servers
from .server import build_server, load_tools, serve_http, serve_main, serve_stdio

__all__ = [
    "McpConnection",
    "McpConnectionError",
    "McpTools",
    "Spec",
    "aopen_servers",
    "atools_from_server",
    "build_server",
    "connect",
    "load_tools",
    "open_servers",
    "result_text",
    "serve_http",
    "serve_main",
    "serve_stdio",
    "tools_from_server",
]
