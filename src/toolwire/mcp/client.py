"""Tools from MCP servers: a live connection whose tools are toolwire `Tool`s.

Owns `McpConnection` (one server, over stdio or streamable HTTP), `connect`,
`tools_from_server` / `atools_from_server` and `McpConnectionError`. Several servers at once,
with clashing names prefixed, are `toolwire.mcp.group`'s. Uses the official ``mcp`` SDK; must
not import the loop, codecs or the transport.

A connection runs in a thread of its own, with its own event loop: the SDK's session and the
task group its calls run in live in one task there, as anyio requires. Calls may come from any
task, event loop or thread; each one is handed to that task group and its answer handed back.
So a connection opened before ``Agent.run`` (which starts an event loop of its own) serves the
run, and parallel calls from one reply (``asyncio.gather`` in the dispatcher) are safe.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import math
import os
import shlex
import tempfile
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO
from urllib.parse import urlsplit

import anyio
from anyio.abc import TaskGroup
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, CallToolResult, Implementation
from mcp_types import Tool as McpTool

from ..errors import ConfigError, ToolDefinitionError, ToolError
from ..schema import Tool
from ._results import result_text

__all__ = [
    "McpConnection",
    "McpConnectionError",
    "Spec",
    "atools_from_server",
    "connect",
    "tools_from_server",
]

Spec = str | Sequence[str]
"""A server: a command line (``"python -m my_server"``, or its argv as a list) run as a
subprocess speaking stdio, or an ``http://`` / ``https://`` URL speaking streamable HTTP."""

_OPEN: weakref.WeakSet[McpConnection] = weakref.WeakSet()
_CLIENT_INFO = Implementation(name="toolwire", version="0.1.0")


class McpConnectionError(ConfigError):
    """An MCP server could not be started, reached or set up; the message says why."""


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    exc = _leaf(exc)
    if isinstance(exc, MCPError):
        return exc.error.message
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _spec_name(target: str | list[str]) -> str:
    """A name for a server that does not give one: its module, script, or host and port."""
    if isinstance(target, str):
        url = urlsplit(target)
        return f"{url.hostname or 'server'}_{url.port}" if url.port else url.hostname or "server"
    if "-m" in target[:-1]:
        return target[target.index("-m") + 1].rsplit(".", 1)[-1]
    for arg in reversed(target[1:]):
        if not arg.startswith("-"):
            return Path(arg).stem
    return Path(target[0]).stem


@dataclass(eq=False)
class _Job:
    name: str
    arguments: dict[str, Any]
    future: asyncio.Future[CallToolResult]
    scope: anyio.CancelScope | None = field(default=None)


class McpConnection:
    """A live connection to one MCP server; its ``tools`` call the server.

    Open it with ``async with connect(spec) as server:`` (or ``with``, or `open` / `aopen`),
    and close it when the tools are no longer needed. ``tools`` are toolwire `Tool`s with the
    server's names, descriptions and input schemas; their calls are checked like any tool's
    before they leave for the server. ``timeout`` bounds starting and setting up the server.
    A stdio server's standard error is kept (its last lines explain a failure) unless
    ``errlog`` is given; ``env`` adds environment variables to the few the SDK passes on
    (``PATH``, ``HOME``...); ``cwd`` is the folder the server runs in.
    """

    def __init__(
        self,
        spec: Spec,
        *,
        name: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        timeout: float = 60.0,
        errlog: TextIO | None = None,
    ) -> None:
        if isinstance(spec, str) and spec.strip().startswith(("http://", "https://")):
            self._target: str | list[str] = spec.strip()
            self.spec = spec.strip()
        else:
            argv = shlex.split(spec) if isinstance(spec, str) else [str(a) for a in spec]
            if not argv:
                raise McpConnectionError(
                    "an MCP server was given as an empty command; give a command line such as "
                    "'python -m my_server' or a URL such as http://127.0.0.1:8000/mcp")
            self._target = argv
            self.spec = shlex.join(argv)
        self.name = name or _spec_name(self._target)
        self.env = dict(env) if env else None
        self.cwd = cwd
        self.timeout = timeout
        self.instructions: str | None = None
        self.listing: tuple[McpTool, ...] = ()
        """The tools as the server listed them."""
        self.tools: tuple[Tool, ...] = ()
        self.notes: list[str] = []
        """What was left out, and why (a tool whose schema toolwire cannot use, say)."""
        self._named = name is not None
        self._errlog = errlog
        self._stderr_path: str | None = None
        self._ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._scope: anyio.CancelScope | None = None
        self._tg: TaskGroup | None = None
        self._client: Client | None = None
        self._jobs: set[_Job] = set()
        self._closing = False
        self._lost: str | None = None

    def __repr__(self) -> str:
        state = "lost" if self._lost else "open" if self._tg is not None else "not open"
        return f"McpConnection({self.name!r}, {self.spec!r}, {state})"

    # ------------------------------------------------------------------ lifecycle

    def _start(self) -> None:
        if self._thread is not None:
            raise RuntimeError(f"MCP connection {self.spec!r} was already opened")
        if isinstance(self._target, list) and self._errlog is None:
            handle, self._stderr_path = tempfile.mkstemp(prefix="toolwire-mcp-", suffix=".log")
            os.close(handle)
        self._thread = threading.Thread(target=lambda: asyncio.run(self._own()), daemon=True,
                                        name=f"toolwire-mcp-{self.name}")
        self._thread.start()
        _OPEN.add(self)

    def _finish_open(self) -> McpConnection:
        try:
            self._ready.result(timeout=0)
        except BaseException as exc:
            message = (f"could not connect to the MCP server {self.spec}: {_describe(exc)}"
                       f"{self._stderr_tail()}")
            self.close()
            raise McpConnectionError(message) from None
        self.tools = tuple(self._build())
        return self

    def open(self) -> McpConnection:
        """Start or reach the server, set up the session and list its tools (blocking)."""
        self._start()
        concurrent.futures.wait([self._ready], timeout=self.timeout + 15)
        self._settle(TimeoutError(f"no answer within {self.timeout:g} s"))
        return self._finish_open()

    async def aopen(self) -> McpConnection:
        """`open` for async code."""
        self._start()
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(self._ready)),
                                   self.timeout + 15)
        except asyncio.CancelledError:
            await asyncio.to_thread(self.close)
            raise
        except BaseException:  # reported by _finish_open
            pass
        self._settle(TimeoutError(f"no answer within {self.timeout:g} s"))
        return self._finish_open()

    def _settle(self, outcome: BaseException | None) -> None:
        """Settle the opening, unless it is settled already (by either thread)."""
        if self._ready.done():
            return
        with contextlib.suppress(concurrent.futures.InvalidStateError):
            if outcome is None:
                self._ready.set_result(None)
            else:
                self._ready.set_exception(outcome)

    def close(self) -> None:
        """Stop the session (and a stdio server's process) and wait for it to end."""
        thread, loop = self._thread, self._loop
        self._closing = True
        if thread is None:
            return
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(self._cancel)
        thread.join(timeout=15)
        _OPEN.discard(self)
        if self._stderr_path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._stderr_path)
            self._stderr_path = None

    async def aclose(self) -> None:
        """`close` for async code."""
        await asyncio.to_thread(self.close)

    def __enter__(self) -> McpConnection:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> McpConnection:
        return await self.aopen()

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()

    @property
    def alive(self) -> bool:
        """Whether the connection is open and its server has not gone away."""
        return self._tg is not None and self._lost is None and not self._closing

    # ------------------------------------------------------------------ the owning task

    def _cancel(self) -> None:
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
        elif self._scope is not None:
            self._scope.cancel()

    def _server(self, files: contextlib.ExitStack) -> Any:
        """What `mcp.Client` connects to: the URL, or a stdio transport for the command."""
        if isinstance(self._target, str):
            return self._target
        errlog = self._errlog
        if errlog is None:
            assert self._stderr_path is not None
            errlog = files.enter_context(open(self._stderr_path, "a", encoding="utf-8"))  # noqa: SIM115
        params = StdioServerParameters(command=self._target[0], args=self._target[1:],
                                       env=self.env,
                                       cwd=None if self.cwd is None else Path(self.cwd))
        return stdio_client(params, errlog=errlog)

    async def _own(self) -> None:
        """The one task the session lives in, from setting up to closing."""
        self._loop = asyncio.get_running_loop()
        failure: BaseException | None = None
        try:
            with contextlib.ExitStack() as files, anyio.CancelScope() as scope:
                self._scope = scope
                if self._closing:
                    scope.cancel()
                scope.deadline = anyio.current_time() + self.timeout
                client = Client(self._server(files), client_info=_CLIENT_INFO)
                async with client:
                    self.listing = tuple(await _list_tools(client))
                    info = client.server_info
                    if info is not None and info.name and not self._named:
                        self.name = info.name
                    self.instructions = client.instructions
                    scope.deadline = math.inf
                    async with anyio.create_task_group() as tg:
                        self._client, self._tg = client, tg
                        self._settle(None)
                        await anyio.sleep_forever()
            if scope.cancelled_caught and not self._ready.done():
                failure = TimeoutError(f"no answer within {self.timeout:g} s"
                                       if not self._closing else "closed while connecting")
        except BaseException as exc:  # everything is reported to the callers
            failure = exc
        finally:
            self._lost = self._lost or (
                f"the connection ended ({_describe(failure)})" if failure else "it was closed")
            self._settle(failure or ConnectionError("the connection ended"))
            for job in list(self._jobs):
                if not job.future.done():
                    job.future.set_exception(ToolError(self._lost_message(job.name,
                                                                          during=True)))

    async def _submit(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        """Runs in the connection's loop: hand the call to the session's task group."""
        tg = self._tg
        if self._lost is not None or tg is None:
            raise ToolError(self._lost_message(name))
        job = _Job(name, arguments, asyncio.get_running_loop().create_future())
        self._jobs.add(job)
        try:
            tg.start_soon(self._run_job, job)
        except RuntimeError:  # the task group is shutting down
            self._jobs.discard(job)
            raise ToolError(self._lost_message(name)) from None
        try:
            return await job.future
        except asyncio.CancelledError:
            if job.scope is not None:
                job.scope.cancel()
            raise
        finally:
            self._jobs.discard(job)

    async def _run_job(self, job: _Job) -> None:
        if job.future.done():  # cancelled before it started
            return
        assert self._client is not None
        with anyio.CancelScope() as scope:
            job.scope = scope
            try:
                result = await self._client.call_tool(job.name, job.arguments)
            except Exception as exc:
                if isinstance(exc, MCPError) and exc.error.code == CONNECTION_CLOSED:
                    self._lost = self._lost or "it closed the connection (it may have exited)"
                    exc = ToolError(self._lost_message(job.name, during=True))
                if not job.future.done():
                    job.future.set_exception(exc)
            else:
                if not job.future.done():
                    job.future.set_result(result)

    # ------------------------------------------------------------------ calls

    def _stderr_tail(self, lines: int = 6, chars: int = 600) -> str:
        if self._stderr_path is None:
            return ""
        try:
            text = Path(self._stderr_path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        tail = "\n".join(line for line in text.splitlines() if line.strip())
        tail = "\n".join(tail.splitlines()[-lines:])[-chars:]
        return f"\nIts last words on stderr:\n{tail}" if tail else ""

    def _lost_message(self, tool: str, *, during: bool = False) -> str:
        when = "while the call was running" if during else "before the call"
        return (f"The call to {tool!r} failed: the MCP server {self.name!r} ({self.spec}) is "
                f"not reachable any more: {self._lost} {when}. Its tools cannot be used in the "
                f"rest of this run.{self._stderr_tail()}")

    async def call_raw(self, name: str, arguments: Mapping[str, Any] | None = None
                       ) -> CallToolResult:
        """Call the server's tool ``name`` (its own name, not a prefixed one) as it is.

        Raises `ToolError` when the server is gone, and the SDK's errors otherwise.
        """
        loop = self._loop
        if self._tg is None or loop is None:
            raise McpConnectionError(f"the MCP connection to {self.spec} is not open")
        if self._lost is not None:
            raise ToolError(self._lost_message(name))
        try:
            future = asyncio.run_coroutine_threadsafe(
                self._submit(name, dict(arguments or {})), loop)
        except RuntimeError:  # its loop has ended
            raise ToolError(self._lost_message(name)) from None
        return await asyncio.wrap_future(future)

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> str:
        """The text of a call's result; raises `ToolError` for an error result or a failure.

        So a tool made from this call gives the model an error result with the server's text
        (or the reason the server could not be reached) rather than ending the run.
        """
        try:
            result = await self.call_raw(name, arguments)
        except ToolError:
            raise
        except MCPError as exc:
            raise ToolError(f"The MCP server {self.name!r} refused the call to {name!r}: "
                            f"{exc.error.message}") from None
        except Exception as exc:
            raise ToolError(f"The call to {name!r} on the MCP server {self.name!r} failed: "
                            f"{_describe(exc)}") from None
        text = result_text(result)
        if result.is_error:
            raise ToolError(text or f"the MCP server {self.name!r} reported that {name!r} "
                            "failed, without saying why")
        return text

    # ------------------------------------------------------------------ tools

    def make_tools(self, names: Mapping[str, str] | None = None) -> list[Tool]:
        """The server's tools as toolwire tools; ``names`` renames some (server name -> new)."""
        return self._build(names)

    def _build(self, names: Mapping[str, str] | None = None) -> list[Tool]:
        made: list[Tool] = []
        seen: set[str] = set()
        self.notes = []
        for listed in self.listing:
            if listed.name in seen:
                self.notes.append(f"MCP server {self.name!r} lists the tool {listed.name!r} "
                                  "twice; only the first is used")
                continue
            seen.add(listed.name)
            try:
                made.append(self._tool(listed, (names or {}).get(listed.name, listed.name)))
            except ToolDefinitionError as exc:
                self.notes.append(f"MCP server {self.name!r}: the tool {listed.name!r} was "
                                  f"left out: {exc}")
        return made

    def _tool(self, listed: McpTool, name: str) -> Tool:
        server_name = listed.name

        async def call_server(**arguments: Any) -> str:
            return await self.call(server_name, arguments)

        call_server.__name__ = call_server.__qualname__ = name
        hints = listed.annotations
        idempotent = bool(hints and (hints.idempotent_hint or hints.read_only_hint))
        return Tool(name=name, description=listed.description or listed.title or "",
                    input_schema=listed.input_schema, fn=call_server, idempotent=idempotent)


async def _list_tools(client: Client) -> list[McpTool]:
    tools: list[McpTool] = []
    cursor: str | None = None
    for _ in range(1000):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def connect(
    spec: Spec,
    *,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 60.0,
    errlog: TextIO | None = None,
) -> McpConnection:
    """A connection to the MCP server ``spec``, to open with ``async with`` or ``with``.

    ``spec`` is a command line run as a stdio server, or a streamable HTTP URL. See
    `McpConnection` for the options.
    """
    return McpConnection(spec, name=name, env=env, cwd=cwd, timeout=timeout, errlog=errlog)


def tools_from_server(spec: Spec, **options: Any) -> list[Tool]:
    """Connect to ``spec`` and return its tools; the connection stays open until exit.

    For control over when it closes, use `connect` (or `toolwire.mcp.open_servers`).
    """
    return list(connect(spec, **options).open().tools)


async def atools_from_server(spec: Spec, **options: Any) -> list[Tool]:
    """`tools_from_server` for async code."""
    return list((await connect(spec, **options).aopen()).tools)


@atexit.register
def _close_all() -> None:
    for connection in list(_OPEN):
        with contextlib.suppress(Exception):
            connection.close()
