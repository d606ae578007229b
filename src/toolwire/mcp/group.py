"""Several MCP servers at once: their tools under names that do not clash, and notes saying so.

Owns `McpTools`, `open_servers` and `aopen_servers` (what ``toolwire run --mcp`` uses). Servers
are opened at the same time; if one cannot be opened, the others are closed again and the error
names every server that failed. `McpTools` also gives what an `Agent` takes besides the tools:
the names of deferred servers' tools, a tool source that adds the tools a server adds later
(named so they clash with nothing), the servers' instructions for the system prompt, and,
when asked, a ``read_resource`` tool (`toolwire.mcp.resources`). Must not import the loop,
codecs or the transport.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from collections.abc import Collection, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, TextIO

from toolwire.mcp._naming import plan_names, server_label, unique_name
from toolwire.mcp.client import McpConnection, McpConnectionError, Spec
from toolwire.mcp.resources import resource_tool
from toolwire.schema.tool import Tool
from toolwire.tools.ask_user import Answerer

__all__ = ["McpTools", "aopen_servers", "open_servers"]


class McpTools:
    """Open connections to several MCP servers and the tools they give, ready for an `Agent`.

    ``tools`` are every server's tools; a name offered by two servers (or already taken by
    ``reserved`` tools) is prefixed with each server's label, and ``notes`` says so. Iterating
    gives the tools. ``resources=True`` adds the ``read_resource`` tool when a server offers
    resources. Close it (or use it as a context manager) to stop the servers.

    For an agent: ``Agent(tools=mcp, deferred=mcp.deferred, tool_sources=[mcp.tool_source],
    system=mcp.system_prompt(system))``.
    """

    def __init__(self, servers: Sequence[McpConnection], reserved: Collection[str] = (),
                 *, resources: bool = False) -> None:
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
        self.deferred: frozenset[str] = frozenset(
            t.name for server, plan in zip(self.servers, plans, strict=True) if server.deferred
            for t in tools if t.name in plan.values())
        """Names of the tools of servers opened as deferred, for ``Agent(deferred=...)``."""
        if resources:
            reader, unread = resource_tool(self.servers)
            extra.extend(unread)
            if reader is not None:
                tools.append(reader)
        self._reserved = set(reserved)
        self.tools: tuple[Tool, ...] = tuple(tools)
        self.notes: tuple[str, ...] = tuple(notes + extra)
        self.read_only: frozenset[str] = frozenset(read_only & {t.name for t in tools})
        """Names (as the model sees them) of the tools their server says change nothing."""

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools)

    @property
    def instructions(self) -> str:
        """What the servers say about using them, each under its server's name ('' if none)."""
        said = [f"The MCP server {s.name!r} says how to use its tools:\n{s.instructions.strip()}"
                for s in self.servers if s.instructions and s.instructions.strip()]
        return "\n\n".join(said)

    def system_prompt(self, system: str | None = None) -> str | None:
        """``system`` followed by the servers' `instructions`."""
        return "\n\n".join(p for p in (system, self.instructions) if p) or None

    def tool_source(self) -> list[Tool]:
        """The tools now, for ``Agent(tool_sources=[mcp.tool_source])``: a server that said
        its tool list changed is listed again, and its new tools get names no other tool has
        (the server's label as a prefix where needed). Deferred tools are left out (they
        join through a search); tools a deferred server adds later are not deferred."""
        taken = {t.name for t in self.tools} | self._reserved
        added: list[Tool] = []
        for label, server in zip(self.labels, self.servers, strict=True):
            if not server.relist():
                continue
            plan = dict(server.current_names)
            for listed in server.listing:
                if listed.name not in plan:
                    plan[listed.name] = (listed.name if listed.name not in taken
                                         else unique_name(f"{label}_{listed.name}", taken))
                    taken.add(plan[listed.name])
            known = {t.name for t in self.tools}
            added.extend(t for t in server.make_tools(plan) if t.name not in known)
            self.notes = (*self.notes, *server.notes)
        if added:
            self.tools = (*self.tools, *added)
        return [t for t in self.tools if t.name not in self.deferred]

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


def _connections(specs: Sequence[Spec], deferred: Sequence[Spec], env: dict[str, str] | None,
                 cwd: str | os.PathLike[str] | None, timeout: float,
                 errlog: TextIO | None, answer: Answerer | None,
                 access: Mapping[str, Mapping[str, Any]] | None) -> list[McpConnection]:
    if isinstance(specs, str) or isinstance(deferred, str):
        raise TypeError("give a list of server specs, not one string")
    return [McpConnection(spec, env=env, cwd=cwd, timeout=timeout, errlog=errlog, answer=answer,
                          deferred=n >= len(specs),
                          **(access or {}).get(spec.strip() if isinstance(spec, str) else "", {}))
            for n, spec in enumerate([*specs, *deferred])]


def _gathered(servers: list[McpConnection], outcomes: Sequence[object],
              reserved: Collection[str], resources: bool) -> McpTools:
    failed = [str(o) for o in outcomes if isinstance(o, BaseException)]
    if failed:
        for server, outcome in zip(servers, outcomes, strict=True):
            if not isinstance(outcome, BaseException):
                server.close()
        raise McpConnectionError("\n".join(failed))
    try:
        return McpTools(servers, reserved, resources=resources)
    except BaseException:
        for server in servers:
            server.close()
        raise


def open_servers(
    specs: Sequence[Spec],
    *,
    deferred: Sequence[Spec] = (),
    reserved: Collection[str] = (),
    resources: bool = False,
    env: dict[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 60.0,
    errlog: TextIO | None = None,
    answer: Answerer | None = None,
    access: Mapping[str, Mapping[str, Any]] | None = None,
) -> McpTools:
    """Open every server in ``specs`` (command lines or URLs) at once and gather their tools.

    ``deferred`` are more servers, whose tools are all deferred (`McpTools.deferred`).
    ``reserved`` names tools the model also gets from elsewhere, so MCP tools with those names
    are prefixed too. ``resources`` adds a ``read_resource`` tool (`McpTools`). ``access``
    gives servers over HTTP, by URL, their ``headers``, ``token`` or ``oauth``
    (`toolwire.mcp.access.access_map` makes it from settings). The other options are
    `toolwire.mcp.McpConnection`'s. Raises `McpConnectionError` naming each server
    that could not be opened.
    """
    servers = _connections(specs, deferred, env, cwd, timeout, errlog, answer, access)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(servers))) as pool:
        futures = [pool.submit(server.open) for server in servers]
    outcomes: list[object] = []
    for future in futures:
        exc = future.exception()
        outcomes.append(exc if exc is not None else future.result())
    return _gathered(servers, outcomes, reserved, resources)


async def aopen_servers(
    specs: Sequence[Spec],
    *,
    deferred: Sequence[Spec] = (),
    reserved: Collection[str] = (),
    resources: bool = False,
    env: dict[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 60.0,
    errlog: TextIO | None = None,
    answer: Answerer | None = None,
    access: Mapping[str, Mapping[str, Any]] | None = None,
) -> McpTools:
    """`open_servers` for async code."""
    servers = _connections(specs, deferred, env, cwd, timeout, errlog, answer, access)
    outcomes = await asyncio.gather(*(s.aopen() for s in servers), return_exceptions=True)
    return await asyncio.to_thread(_gathered, servers, outcomes, reserved, resources)
