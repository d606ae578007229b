"""MCP support: tools from MCP servers for an `Agent`, and toolwire tools served over MCP.

Needs the official ``mcp`` SDK (``pip install "toolwire[mcp]"``).

Client side: ``async with toolwire.mcp.connect("python -m my_server") as server:`` gives
``server.tools``, toolwire `Tool`s whose calls go to the server; `open_servers` opens several
servers at once and prefixes tool names that clash. A URL (``http://127.0.0.1:8000/mcp``)
connects over streamable HTTP instead of starting a command, with ``headers``, a bearer
``token`` or `OAuth` for servers that want credentials (`toolwire.mcp.auth`).

The tools pass on structured output (checked against its schema) and media; a server's
questions go to the user through an ``answer`` callback (`toolwire.mcp.elicit`, with `DECLINE`
and `CANCEL`); `open_servers` also gives deferred servers, tools added mid-run, a
``read_resource`` tool (`toolwire.mcp.resources`) and the servers' instructions.

Server side: `build_server` makes an MCP server from toolwire tools (output schemas from return
types, media results, ``ask_user`` as elicitation), with resources and prompts (`resource`,
`prompt`, `toolwire.mcp.offers`) and a `Context` a tool may take to report progress, log,
sample and ask (`toolwire.mcp.context`); `serve_main` runs one over stdio or
streamable HTTP (``toolwire mcp-serve`` / ``python -m toolwire.mcp``).

Importing this package is cheap: the SDK is imported when a name is first used, so the command
line can add its options (`toolwire.mcp.cli`) without loading it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolwire.mcp._results import result_text
    from toolwire.mcp.auth import OAuth
    from toolwire.mcp.client import (
        McpConnection,
        McpConnectionError,
        Spec,
        atools_from_server,
        connect,
        tools_from_server,
    )
    from toolwire.mcp.context import Context
    from toolwire.mcp.elicit import CANCEL, DECLINE
    from toolwire.mcp.group import McpTools, aopen_servers, open_servers
    from toolwire.mcp.offers import Prompt, Resource, embedded_resource, prompt, resource
    from toolwire.mcp.server import (
        build_server,
        load_offer,
        load_tools,
        serve_http,
        serve_main,
        serve_stdio,
    )

_LAZY: dict[str, str] = {
    "CANCEL": "elicit",
    "Context": "context",
    "DECLINE": "elicit",
    "McpConnection": "client",
    "McpConnectionError": "client",
    "McpTools": "group",
    "OAuth": "auth",
    "Prompt": "offers",
    "Resource": "offers",
    "Spec": "client",
    "aopen_servers": "group",
    "atools_from_server": "client",
    "build_server": "server",
    "connect": "client",
    "embedded_resource": "offers",
    "load_offer": "server",
    "load_tools": "server",
    "open_servers": "group",
    "prompt": "offers",
    "resource": "offers",
    "result_text": "_results",
    "serve_http": "server",
    "serve_main": "server",
    "serve_stdio": "server",
    "tools_from_server": "client",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolwire.mcp' has no attribute {name!r}")
    try:
        loaded = importlib.import_module(f".{module}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("mcp", "mcp_types"):
            raise ImportError(
                'toolwire.mcp needs the MCP SDK: pip install "toolwire[mcp]"') from exc
        raise
    value = getattr(loaded, name)
    globals()[name] = value
    return value


__all__ = [
    "CANCEL",
    "DECLINE",
    "Context",
    "McpConnection",
    "McpConnectionError",
    "McpTools",
    "OAuth",
    "Prompt",
    "Resource",
    "Spec",
    "aopen_servers",
    "atools_from_server",
    "build_server",
    "connect",
    "embedded_resource",
    "load_offer",
    "load_tools",
    "open_servers",
    "prompt",
    "resource",
    "result_text",
    "serve_http",
    "serve_main",
    "serve_stdio",
    "tools_from_server",
]
