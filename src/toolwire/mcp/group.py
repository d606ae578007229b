"""Several MCP servers at once: their tools under names that do not clash, and notes saying so.

Owns `McpTools`, `open_servers` and `aopen_servers` (what ``toolwire run --mcp`` uses). Servers
are opened at the same time; if one cannot be opened, the others are closed again and the error
names every server that failed. Must not import the loop, codecs or the transport.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from collections.abc import Collection, Iterator, Sequence
from types import TracebackType
from typing import TextIO

from toolwire.mcp._naming import plan_names, server_label
from toolwire.mcp.client import McpConnection, McpConnectionError, Spec
from toolwire.schema.tool import Tool

__all__ = ["McpTools", "aopen_servers", "open_servers"]


class McpTools:
    """Open connections to several MCP servers and the tools they give, ready for an `Agent`.

    ``tools`` are every server's tools; a name offered by two servers (or already taken by
    ``reserved`` tools) is prefixed with each server's label, and ``notes`` says so. Iterating
    gives the tools. Close it (or use it as a context manager) to stop the servers.
    """

    def __init__(self, servers: Sequence[McpConnection], reserved: Collection[str] = ()) -> None:
        self.servers = tuple(servers)
        labels: list[str] = []
        for n, server in enumerate(self.servers, start=1):
            label = server_label(server.name, f"mcp{n}")
            base, k = label, 2
            while label in labels:
                label, k = f"{base}{k}", k + 1
            labels.append(label)
        plans, notes = plan_names(
            [(label, [t.name for t in s.listing]) for label, s in zip(labels, self.servers,
                                                                       strict=True)],
            reserved,
        )
        tools: list[Tool] = []
        extra: list[str] = []
        read_only: set[str] = set()
        for server, plan in zip(self.servers, plans, strict=True):
            tools.extend(server.make_tools(plan))
            extra.extend(server.notes)
            read_only.update(plan[t.name] for t in server.listing
                             if t.annotations is not None and t.annotations.read_only_hint)
        self.labels = tuple(labels)
        self.tools: tuple[Tool, ...] = tuple(tools)
        self.notes: tuple[str, ...] = tuple(notes + extra)
        self.read_only: frozenset[str] = frozenset(read_only & {t.name for t in tools})
        """Names (as the model sees them) of the tools their server says change nothing."""

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools)

    def __len__(self) -> int:
        return len(self.tools)

    def __repr__(self) -> str:
        return f"McpTools(servers={[s.name for s in self.servers]}, tools={len(self.tools)})"

    def close(self) -> None:
        """Close every connection, all at once (stdio servers are stopped)."""
        if len(self.servers) < 2:
            for server in self.servers:
                server.close()
            return
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(self.servers)) as pool:
            list(pool.map(McpConnection.close, self.servers))

    async def aclose(self) -> None:
        """`close` for async code."""
        await asyncio.gather(*(server.aclose() for server in self.servers))

    def __enter__(self) -> McpTools:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> McpTools:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()


def _connections(specs: Sequence[Spec], env: dict[str, str] | None,
                 cwd: str | os.PathLike[str] | None, timeout: float,
                 errlog: TextIO | None) -> list[McpConnection]:
    if isinstance(specs, str):
        raise TypeError("give a list of server specs, not one string")
    return [McpConnection(spec, env=env, cwd=cwd, timeout=timeout, errlog=errlog)
            for spec in specs]


def _gathered(servers: list[McpConnection], outcomes: Sequence[object],
              reserved: Collection[str]) -> McpTools:
    failed = [str(o) for o in outcomes if isinstance(o, BaseException)]
    if failed:
        for server, outcome in zip(servers, outcomes, strict=True):
            if not isinstance(outcome, BaseException):
                server.close()
        raise McpConnectionError("\n".join(failed))
    return McpTools(servers, reserved)


def open_servers(
    specs: Sequence[Spec],
    *,
    reserved: Collection[str] = (),
    env: dict[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 60.0,
    errlog: TextIO | None = None,
) -> McpTools:
    """Open every server in ``specs`` (command lines or URLs) at once and gather their tools.

    ``reserved`` names tools the model also gets from elsewhere, so MCP tools with those names
    are prefixed too. The other options are `toolwire.mcp.McpConnection`'s. Raises
    `McpConnectionError` naming each server that could not be opened.
    """
    servers = _connections(specs, env, cwd, timeout, errlog)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(servers))) as pool:
        futures = [pool.submit(server.open) for server in servers]
    outcomes: list[object] = []
    for future in futures:
        exc = future.exception()
        outcomes.append(exc if exc is not None else future.result())
    return _gathered(servers, outcomes, reserved)


async def aopen_servers(
    specs: Sequence[Spec],
    *,
    reserved: Collection[str] = (),
    env: dict[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 60.0,
    errlog: TextIO | None = None,
) -> McpTools:
    """`open_servers` for async code."""
    servers = _connections(specs, env, cwd, timeout, errlog)
    outcomes = await asyncio.gather(*(s.aopen() for s in servers), return_exceptions=True)
    return _gathered(servers, outcomes, reserved)
