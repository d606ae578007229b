"""Tools from MCP servers: a live connection whose tools are toolwire `Tool`s.

Owns `McpConnection` (one server, over stdio or streamable HTTP), `connect`,
`tools_from_server` / `atools_from_server` and `McpConnectionError`. Several servers at once,
with clashing names prefixed, are `toolwire.mcp.group`'s; how a server is reached (its
transport, its kept stderr) is `toolwire.mcp._reach`'s. Uses the official ``mcp`` SDK; must
not import the loop, codecs or the transport.

A call carries the current OpenTelemetry trace context in its ``_meta``, as the MCP
conventions ask, when OpenTelemetry is in use (`toolwire.telemetry`); this module never imports
it by itself.

The session runs in a thread of its own (`toolwire.mcp._session`), so its tools can be called
from any task, event loop or thread: a connection opened before ``Agent.run`` (which starts an
event loop of its own) serves the run, and parallel calls from one reply are safe. What the
server says while a call runs reaches the run that made the call: its progress notifications
as `toolwire.events.ToolProgress` events, and its elicitation requests (asked of the user by
`toolwire.mcp.elicit.Asker`) as `toolwire.events.ToolAsked` events. A tool that declares an
output schema gives its structured content, checked against that schema, as JSON; images,
audio and binary resources become media parts. `McpConnection.tool_source` is polled by an
`Agent` between turns (``tool_sources``), so a tool the server adds joins the run.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import os
import weakref
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, TextIO

from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ServerCapabilities
from mcp_types import Tool as McpTool

from toolwire.errors import ConfigError, ToolDefinitionError, ToolError
from toolwire.events import Event, ToolAsked, ToolProgress
from toolwire.mcp._naming import spec_name
from toolwire.mcp._reach import StderrLog, span_attributes, target_of, transport
from toolwire.mcp._reporting import teller, trace_context
from toolwire.mcp._results import result_value
from toolwire.mcp._session import Hooks, Lost, SessionThread, describe
from toolwire.mcp.auth import OAuth, Refused, secret_headers
from toolwire.mcp.elicit import Asker
from toolwire.schema.tool import Tool
from toolwire.secrets import Redactor
from toolwire.tools.ask_user import Answerer

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


class McpConnectionError(ConfigError):
    """An MCP server could not be started, reached or set up; the message says why."""


class McpConnection:
    """A live connection to one MCP server; its ``tools`` call the server.

    Open it with ``async with connect(spec) as server:`` (or ``with``, or `open` / `aopen`),
    and close it when the tools are no longer needed. ``tools`` are toolwire `Tool`s with the
    server's names, descriptions and input schemas; their calls are checked like any tool's
    before they leave for the server. ``timeout`` bounds starting and setting up the server.
    A stdio server's standard error is kept (its last lines explain a failure) unless
    ``errlog`` is given; ``env`` adds environment variables to the few the SDK passes on
    (``PATH``, ``HOME``...); ``cwd`` is the folder the server runs in. ``answer`` asks the user
    the server's elicitation requests (see `toolwire.mcp.elicit`; None: they are declined, the
    reason in the run log). ``deferred``: all the server's tools are deferred (found with
    ``search_tools``, see `McpTools.deferred`). Over HTTP, ``headers`` go with every request,
    ``token`` as ``Authorization: Bearer``, and ``oauth`` (`toolwire.mcp.auth.OAuth`) gets
    tokens from the server's authorization server; none of them is ever written down.
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
        answer: Answerer | None = None,
        deferred: bool = False,
        headers: Mapping[str, str] | None = None,
        token: str | None = None,
        oauth: OAuth | None = None,
    ) -> None:
        self.headers, self.token, self.oauth = dict(headers or {}), token, oauth
        secret_headers(self.headers, token)
        try:
            self._target, self.spec = target_of(spec, credentials=bool(headers or token or oauth))
        except ValueError as exc:
            raise McpConnectionError(str(exc)) from None
        self.name = name or spec_name(self._target)
        self.env = dict(env) if env else None
        self.cwd = cwd
        self.timeout = timeout
        self.deferred = deferred
        self.tools: tuple[Tool, ...] = ()
        self.notes: list[str] = []
        """What was left out, and why (a tool whose schema toolwire cannot use, say)."""
        self._named = name is not None
        self._errlog = errlog
        self._stderr = StderrLog()
        self._calls: list[tuple[str, Callable[[Event], None]]] = []
        """The calls running now: the tool name the model sees and how to tell its run."""
        self._names: dict[str, str] = {}
        self._opened_with: frozenset[str] = frozenset()
        self._asker = Asker(answer, self.name, self._asked)
        self._session = SessionThread(self._server, timeout=timeout, label=self.name,
                                      hooks=Hooks(elicit=self._asker))
        self._started = False
        self._refused = Refused()

    @property
    def telemetry(self) -> dict[str, str | int]:
        """What an ``execute_tool`` span of one of these tools adds (`toolwire.telemetry`)."""
        return span_attributes(self._target)

    def __repr__(self) -> str:
        state = ("open" if self.alive else "lost" if self._session.lost and self._started
                 else "not open")
        return f"McpConnection({self.name!r}, {self.spec!r}, {state})"

    @property
    def _credentials(self) -> bool:
        return bool(self.headers or self.token or self.oauth)

    @property
    def listing(self) -> tuple[McpTool, ...]:
        """The tools as the server listed them."""
        return self._session.listing

    @property
    def instructions(self) -> str | None:
        """What the server says about using it, if it says anything."""
        return self._session.instructions

    @property
    def capabilities(self) -> ServerCapabilities | None:
        """What the server said it can do (tools, resources...), once open."""
        return self._session.capabilities

    @property
    def session(self) -> SessionThread:
        """The session the connection's requests go through."""
        return self._session

    @property
    def alive(self) -> bool:
        """Whether the connection is open and its server has not gone away."""
        return self._session.running

    # ------------------------------------------------------------------ lifecycle

    def _server(self, files: contextlib.ExitStack) -> Any:
        """What `mcp.Client` connects to: the URL, or a stdio transport for the command."""
        return transport(self._target, files, errlog=self._errlog, stderr=self._stderr,
                         env=self.env, cwd=self.cwd, headers=self.headers, token=self.token,
                         oauth=self.oauth, refused=self._refused)

    def _start(self) -> None:
        if self._started:
            raise RuntimeError(f"the MCP connection to {self.spec} was already opened")
        self._started = True
        if isinstance(self._target, list) and self._errlog is None:
            self._stderr.make()
        self._session.start()
        _OPEN.add(self)

    def _finish_open(self) -> McpConnection:
        self._session.settle(TimeoutError(f"no answer within {self.timeout:g} s"))
        try:
            self._session.ready.result(timeout=0)
        except BaseException as exc:
            why = self._refused.said(self.spec, self._credentials, describe(exc))
            message = (f"could not connect to the MCP server {self.spec}: {why}"
                       f"{self._stderr.tail()}")
            self.close()
            raise McpConnectionError(Redactor.shared()(message)) from None
        if self._session.server_name and not self._named:
            self.name = self._asker.server = self._session.server_name
        self.tools = tuple(self._build())
        self._opened_with = frozenset(t.name for t in self.tools)
        return self

    def open(self) -> McpConnection:
        """Start or reach the server, set up the session and list its tools (blocking)."""
        self._start()
        concurrent.futures.wait([self._session.ready], timeout=self.timeout + 15)
        return self._finish_open()

    async def aopen(self) -> McpConnection:
        """`open` for async code."""
        self._start()
        ready = asyncio.wrap_future(self._session.ready)
        ready.add_done_callback(lambda f: f.cancelled() or f.exception())  # always retrieved
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.timeout + 15)
        except asyncio.CancelledError:
            await asyncio.to_thread(self.close)
            raise
        except BaseException:  # reported by _finish_open
            pass
        return self._finish_open()

    def close(self) -> None:
        """Stop the session (and a stdio server's process) and wait for it to end."""
        self._session.stop()
        _OPEN.discard(self)
        self._stderr.remove()

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

    # ------------------------------------------------------------------ calls

    def _lost_message(self, tool: str, lost: Lost) -> str:
        when = "while the call was running" if lost.during else "before the call"
        return (f"The call to {tool!r} failed: the MCP server {self.name!r} ({self.spec}) is "
                f"not reachable any more: {lost.reason} {when}. Its tools cannot be used in "
                f"the rest of this run.{self._stderr.tail()}")

    def _asked(self, question: str, action: str, reason: str) -> None:
        """What came of an elicitation request, told to the run of the latest call."""
        if self._calls:
            tool, tell = self._calls[-1]
            tell(ToolAsked(tool, question, action, reason))

    async def call_raw(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                       shown_as: str | None = None) -> CallToolResult:
        """Call the server's tool ``name`` (its own name, not a prefixed one) as it is; what
        the server reports meanwhile goes to the calling run, for tool ``shown_as``.

        Raises `ToolError` when the server is gone, and the SDK's errors otherwise.
        """
        if not self._started:
            raise McpConnectionError(f"the MCP connection to {self.spec} is not open")
        tool, tell = shown_as or name, teller()

        async def report(progress: float, total: float | None, message: str | None) -> None:
            tell(ToolProgress(tool, progress, total, message))

        entry = (tool, tell)
        self._calls.append(entry)
        try:
            return await self._session.call(name, arguments or {}, trace_context(), report)
        except Lost as lost:
            raise ToolError(self._lost_message(name, lost)) from None
        finally:
            self._calls.remove(entry)

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                   shown_as: str | None = None) -> Any:
        """A call's result as a tool returns it (`toolwire.mcp._results.result_value`: text,
        checked structured content, or text and media); raises `ToolError` for an error result
        or a failure.

        So a tool made from this call gives the model an error result with the server's text
        (or the reason the server could not be reached) rather than ending the run.
        """
        try:
            result = await self.call_raw(name, arguments, shown_as=shown_as)
        except (ToolError, McpConnectionError):
            raise
        except MCPError as exc:
            why = self._refused.said(self.spec, self._credentials, exc.error.message)
            raise ToolError(f"The MCP server {self.name!r} refused the call to {name!r}: "
                            f"{why}") from None
        except RuntimeError as exc:
            if "structured content" not in str(exc):
                raise ToolError(f"The call to {name!r} on the MCP server {self.name!r} failed: "
                                f"{describe(exc)}") from None
            first = str(exc).strip().partition("\n")[0]
            raise ToolError(f"The MCP server {self.name!r} answered the call to {name!r} with a "
                            f"result that breaks the tool's own output schema: {first}. The "
                            "result was not used; the server is at fault, not the call.") from None
        except Exception as exc:
            raise ToolError(f"The call to {name!r} on the MCP server {self.name!r} failed: "
                            f"{describe(exc)}") from None
        value = result_value(result, self._output_schema(name))
        if result.is_error:
            text = value if isinstance(value, str) else result_value(result)
            raise ToolError(str(text) or f"the MCP server {self.name!r} reported that {name!r} "
                            "failed, without saying why")
        return value

    def _output_schema(self, name: str) -> dict[str, Any] | None:
        return next((dict(t.output_schema) for t in self.listing
                     if t.name == name and t.output_schema is not None), None)

    # ------------------------------------------------------------------ tools

    def make_tools(self, names: Mapping[str, str] | None = None) -> list[Tool]:
        """The server's tools as toolwire tools; ``names`` renames some (server name -> new)."""
        return self._build(names)

    @property
    def current_names(self) -> Mapping[str, str]:
        """The names the server's tools were last given (server name -> name shown)."""
        return self._names

    def relist(self) -> bool:
        """When the server said its tool list changed, list it again (blocking); whether it
        did. A server that cannot be reached leaves the tools as they were, with a note."""
        if not (self._session.stale and self.alive):
            return False
        try:
            self._session.relist(self.timeout)
        except Exception as exc:
            self.notes.append(f"MCP server {self.name!r} changed its tools but could not list "
                              f"them again: {describe(exc)}")
            return False
        return True

    def tool_source(self) -> list[Tool]:
        """The server's tools now, for ``Agent(tool_sources=[connection.tool_source])``: polled
        before each model call, so tools the server adds join the run (see `relist`). A
        deferred server's first tools are left out: they join through a search."""
        if self.relist():
            self.tools = tuple(self._build(self._names))
        return [t for t in self.tools if not (self.deferred and t.name in self._opened_with)]

    def _build(self, names: Mapping[str, str] | None = None) -> list[Tool]:
        self._names = dict(names or {})
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

        async def call_server(**arguments: Any) -> Any:
            return await self.call(server_name, arguments, shown_as=name)

        call_server.__name__ = call_server.__qualname__ = name
        vars(call_server)["telemetry"] = self.telemetry  # on its execute_tool spans
        hints = listed.annotations
        read_only = bool(hints and hints.read_only_hint)
        idempotent = bool(hints and (hints.idempotent_hint or read_only))
        return Tool(name=name, description=listed.description or listed.title or "",
                    input_schema=listed.input_schema, fn=call_server, idempotent=idempotent,
                    read_only=read_only)


def connect(
    spec: Spec,
    *,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 60.0,
    errlog: TextIO | None = None,
    answer: Answerer | None = None,
    deferred: bool = False,
    headers: Mapping[str, str] | None = None,
    token: str | None = None,
    oauth: OAuth | None = None,
) -> McpConnection:
    """A connection to the MCP server ``spec``, to open with ``async with`` or ``with``.

    ``spec`` is a command line run as a stdio server, or a streamable HTTP URL. See
    `McpConnection` for the options.
    """
    return McpConnection(spec, name=name, env=env, cwd=cwd, timeout=timeout, errlog=errlog,
                         answer=answer, deferred=deferred, headers=headers, token=token,
                         oauth=oauth)


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
