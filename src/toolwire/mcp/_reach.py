"""How an MCP server is reached: a command run as a stdio subprocess, or a streamable HTTP URL.

Owns `target_of` (the server a spec names), `transport` (what the SDK's ``Client`` connects
to for it), `span_attributes` (the MCP conventions' attributes of a call's ``execute_tool``
span: method, transport, and the server's address over HTTP) and `StderrLog` (a stdio
server's standard error kept in a file of its own, whose last lines explain why it failed).
`toolwire.mcp.client` keeps the connection and its tools on top. Must not import the loop,
codecs or the transport.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client

from toolwire.mcp.auth import OAuth, Refused, over_http

Target = str | list[str]
"""A server's URL, or its command line as an argv."""


def target_of(spec: str | Sequence[str], *, credentials: bool) -> tuple[Target, str]:
    """The server ``spec`` names and how messages name it. A ValueError says what to give
    instead for an empty command, and for credentials (headers, a token, OAuth) given with
    a command rather than a URL."""
    if isinstance(spec, str) and spec.strip().startswith(("http://", "https://")):
        return spec.strip(), spec.strip()
    argv = shlex.split(spec) if isinstance(spec, str) else [str(a) for a in spec]
    if not argv:
        raise ValueError("an MCP server was given as an empty command; give a command line such "
                         "as 'python -m my_server' or a URL such as http://127.0.0.1:8000/mcp")
    if credentials:
        raise ValueError(f"headers, tokens and OAuth are for MCP servers over HTTP; "
                         f"{shlex.join(argv)} is a command (use env)")
    return argv, shlex.join(argv)


def span_attributes(target: Target) -> dict[str, str | int]:
    """What an ``execute_tool`` span of a tool of the server at ``target`` adds
    (`toolwire.telemetry`): the MCP conventions' method and transport, and the server's address
    over HTTP."""
    found: dict[str, str | int] = {"gen_ai.tool.type": "extension",
                                   "mcp.method.name": "tools/call"}
    if isinstance(target, str):
        url = urlsplit(target)
        found["network.transport"] = "tcp"
        if url.hostname:
            found["server.address"] = url.hostname
            found["server.port"] = url.port or (443 if url.scheme == "https" else 80)
    else:
        found["network.transport"] = "pipe"
    return found


def transport(target: Target, files: contextlib.ExitStack, *, errlog: TextIO | None,
              stderr: StderrLog, env: Mapping[str, str] | None,
              cwd: str | os.PathLike[str] | None, headers: Mapping[str, str],
              token: str | None, oauth: OAuth | None, refused: Refused) -> Any:
    """What `mcp.Client` connects to: the URL, or a stdio transport for the command whose
    standard error goes to ``errlog`` or else to ``stderr``'s file (opened in ``files``)."""
    if isinstance(target, str):
        return over_http(target, headers=headers, token=token, oauth=oauth, refused=refused)
    if errlog is None:
        assert stderr.path is not None
        errlog = files.enter_context(open(stderr.path, "a", encoding="utf-8"))  # noqa: SIM115
    params = StdioServerParameters(command=target[0], args=target[1:],
                                   env=None if env is None else dict(env),
                                   cwd=None if cwd is None else Path(cwd))
    return stdio_client(params, errlog=errlog)


class StderrLog:
    """A stdio server's standard error, kept in a temporary file from `make` to `remove`."""

    __slots__ = ("path",)

    def __init__(self) -> None:
        self.path: str | None = None

    def make(self) -> None:
        handle, self.path = tempfile.mkstemp(prefix="toolwire-mcp-", suffix=".log")
        os.close(handle)

    def tail(self, lines: int = 6, chars: int = 600) -> str:
        """The server's last words, as a paragraph to add to a message ("" when none)."""
        if self.path is None:
            return ""
        try:
            text = Path(self.path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        kept = [line for line in text.splitlines() if line.strip()][-lines:]
        tail = "\n".join(kept)[-chars:]
        return f"\nIts last words on stderr:\n{tail}" if tail else ""

    def remove(self) -> None:
        if self.path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            self.path = None
