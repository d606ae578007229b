"""One MCP client session kept alive in a thread of its own, callable from anywhere.

Owns `SessionThread`, `Hooks` and `Lost`. The SDK's ``Client`` is entered, used and left in one
task of the thread's event loop, with the task group its calls run in, as anyio requires. A
request made from any task, event loop or thread (`SessionThread.call`, `SessionThread.request`)
is handed to that task group and its answer handed back; cancelling the caller cancels it. A
server's word that its tool list changed (the ``notifications/tools/list_changed`` notification,
or a ``subscriptions/listen`` event on newer protocol versions) marks the listing stale
(`SessionThread.stale`); `SessionThread.relist` lists again. Knows nothing of toolwire tools:
`toolwire.mcp.client` builds those on top. Must not import the loop, codecs or the transport.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import math
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import anyio
from anyio.abc import TaskGroup
from mcp import Client
from mcp.client.session import ElicitationFnT
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CONNECTION_CLOSED,
    CallToolResult,
    Implementation,
    ResourceListChangedNotification,
    ServerCapabilities,
    ToolListChangedNotification,
)
from mcp_types import Tool as McpTool

__all__ = ["Hooks", "Lost", "SessionThread", "describe"]

MakeServer = Callable[[contextlib.ExitStack], Any]
"""Given an exit stack for files it opens, what `mcp.Client` connects to (a URL or transport)."""


def _client_info() -> Implementation:
    try:
        return Implementation(name="toolwire", version=version("toolwire"))
    except PackageNotFoundError:
        return Implementation(name="toolwire", version="")


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException) -> str:
    """A one-line reason from an exception (the first of a group; an MCP error's message)."""
    exc = _leaf(exc)
    if isinstance(exc, MCPError):
        return exc.error.message
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Lost(Exception):
    """The session has ended (the server went away, or it was closed).

    ``reason`` says how; ``during`` is True when the call was already running then.
    """

    def __init__(self, reason: str, *, during: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.during = during


@dataclass(frozen=True)
class Hooks:
    """What a session does with a server's own requests: ``elicit`` answers its elicitation
    requests (None: the SDK's default, which refuses them)."""

    elicit: ElicitationFnT | None = None


@dataclass(eq=False)
class _Job:
    work: Callable[[Client], Awaitable[Any]]
    future: asyncio.Future[Any]
    scope: anyio.CancelScope | None = field(default=None)


class SessionThread:
    """An MCP session in a daemon thread: `start`, wait on ``ready``, `call`, `stop`."""

    def __init__(self, make_server: MakeServer, *, timeout: float, label: str,
                 hooks: Hooks | None = None) -> None:
        self._make_server = make_server
        self.hooks = hooks or Hooks()
        self.stale = False
        """True once the server said its tool list changed, until `relist` lists it again."""
        self.timeout = timeout
        self.label = label
        self.ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.listing: tuple[McpTool, ...] = ()
        self.server_name: str | None = None
        self.instructions: str | None = None
        self.capabilities: ServerCapabilities | None = None
        self.lost: str | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._scope: anyio.CancelScope | None = None
        self._tg: TaskGroup | None = None
        self._client: Client | None = None
        self._jobs: set[_Job] = set()
        self._stopping = False

    @property
    def running(self) -> bool:
        return self._tg is not None and self.lost is None and not self._stopping

    def start(self) -> None:
        self._thread = threading.Thread(target=lambda: asyncio.run(self._own()), daemon=True,
                                        name=f"toolwire-mcp-{self.label}")
        self._thread.start()

    def settle(self, outcome: BaseException | None) -> None:
        """Settle ``ready``, unless it is settled already (by either thread)."""
        if self.ready.done():
            return
        with contextlib.suppress(concurrent.futures.InvalidStateError):
            if outcome is None:
                self.ready.set_result(None)
            else:
                self.ready.set_exception(outcome)

    def stop(self, wait: float = 15.0) -> None:
        """End the session (calls still running fail) and wait for the thread to end."""
        self._stopping = True
        loop, thread = self._loop, self._thread
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(self._cancel)
        if thread is not None:
            thread.join(timeout=wait)

    def _cancel(self) -> None:
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
        elif self._scope is not None:
            self._scope.cancel()

    async def _own(self) -> None:
        """The one task the session lives in, from setting up to closing."""
        self._loop = asyncio.get_running_loop()
        failure: BaseException | None = None
        try:
            with contextlib.ExitStack() as files, anyio.CancelScope() as scope:
                self._scope = scope
                if self._stopping:
                    scope.cancel()
                scope.deadline = anyio.current_time() + self.timeout
                async with Client(self._make_server(files), client_info=_client_info(),
                                  message_handler=self._notified,
                                  elicitation_callback=self.hooks.elicit) as client:
                    self.listing = tuple(await _list_tools(client))
                    info = client.server_info
                    self.server_name = info.name if info is not None and info.name else None
                    self.instructions = client.instructions
                    self.capabilities = client.server_capabilities
                    scope.deadline = math.inf
                    async with anyio.create_task_group() as tg:
                        self._client, self._tg = client, tg
                        tg.start_soon(self._listen, client)
                        self.settle(None)
                        await anyio.sleep_forever()
            if scope.cancelled_caught and not self.ready.done():
                failure = TimeoutError("closed while connecting" if self._stopping
                                       else f"no answer within {self.timeout:g} s")
        except BaseException as exc:  # everything is reported to the callers
            failure = exc
        finally:
            self.lost = self.lost or (
                f"the connection ended ({describe(failure)})" if failure else "it was closed")
            self.settle(failure or ConnectionError("the connection ended"))
            for job in list(self._jobs):
                if not job.future.done():
                    job.future.set_exception(Lost(self.lost, during=True))

    async def _notified(self, message: object) -> None:
        """The SDK's message handler: a changed tool or resource list marks it stale."""
        if isinstance(message, ToolListChangedNotification | ResourceListChangedNotification):
            self.stale = True

    async def _listen(self, client: Client) -> None:
        """On protocol versions that send list changes as ``subscriptions/listen`` events only,
        listen for them (older ones send the notification `_notified` sees)."""
        caps = client.server_capabilities
        if caps is None or caps.tools is None or not caps.tools.list_changed:
            return
        with contextlib.suppress(Exception):  # not offered on this version: notifications come
            async with client.listen(tools_list_changed=True) as events:
                async for _ in events:
                    self.stale = True

    def relist(self, timeout: float) -> tuple[McpTool, ...]:
        """List the server's tools again (clearing `stale`), blocking the calling thread (not
        the session's) for at most ``timeout`` seconds."""
        self.stale = False
        self.listing = tuple(self.wait(_list_tools, timeout))
        return self.listing

    def wait(self, work: Callable[[Client], Awaitable[Any]], timeout: float) -> Any:
        """`request` for code outside the session's thread that has no event loop to await in:
        blocks for at most ``timeout`` seconds."""
        loop = self._loop
        if self.lost is not None or loop is None or self._tg is None:
            raise Lost(self.lost or "it is not open", during=False)
        return asyncio.run_coroutine_threadsafe(self._submit(work), loop).result(timeout)

    async def call(self, name: str, arguments: Mapping[str, Any],
                   meta: dict[str, str] | None = None,
                   progress: ProgressFnT | None = None) -> CallToolResult:
        """Call tool ``name`` from any task, loop or thread, with ``meta`` as the request's
        ``_meta`` and ``progress`` given its progress notifications; raises `Lost` once the
        session has ended."""
        arguments = dict(arguments)

        def work(client: Client) -> Awaitable[CallToolResult]:
            return client.call_tool(name, arguments, meta=meta,  # type: ignore[arg-type]
                                    progress_callback=progress)

        result: CallToolResult = await self.request(work)
        return result

    async def request(self, work: Callable[[Client], Awaitable[Any]]) -> Any:
        """Await ``work(client)`` in the session, from any task, loop or thread; raises `Lost`
        once the session has ended."""
        loop = self._loop
        if self.lost is not None or loop is None or self._tg is None:
            raise Lost(self.lost or "it is not open", during=False)
        try:
            future = asyncio.run_coroutine_threadsafe(self._submit(work), loop)
        except RuntimeError:  # its loop has ended
            raise Lost(self.lost or "it was closed", during=False) from None
        return await asyncio.wrap_future(future)

    async def _submit(self, work: Callable[[Client], Awaitable[Any]]) -> Any:
        """Runs in the session's loop: hand the work to the session's task group."""
        tg = self._tg
        if self.lost is not None or tg is None:
            raise Lost(self.lost or "it is not open", during=False)
        job = _Job(work, asyncio.get_running_loop().create_future())
        self._jobs.add(job)
        try:
            tg.start_soon(self._run, job)
        except RuntimeError:  # the task group is shutting down
            self._jobs.discard(job)
            raise Lost(self.lost or "it was closed", during=False) from None
        try:
            return await job.future
        except asyncio.CancelledError:
            if job.scope is not None:
                job.scope.cancel()
            raise
        finally:
            self._jobs.discard(job)

    async def _run(self, job: _Job) -> None:
        if job.future.done():  # cancelled before it started
            return
        assert self._client is not None
        with anyio.CancelScope() as scope:
            job.scope = scope
            try:
                result = await job.work(self._client)
            except Exception as exc:
                if isinstance(exc, MCPError) and exc.error.code == CONNECTION_CLOSED:
                    self.lost = self.lost or "it closed the connection (it may have exited)"
                    exc = Lost(self.lost, during=True)
                if not job.future.done():
                    job.future.set_exception(exc)
            else:
                if not job.future.done():
                    job.future.set_result(result)


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
