"""toolwire tools served as an MCP server, over stdio or streamable HTTP.

Owns `build_server` (an MCP SDK ``Server`` answering ``tools/list`` and ``tools/call`` from
toolwire tools), `load_tools` (``MODULE:ATTR`` or ``path/file.py:ATTR``), `serve_stdio`,
`serve_http` and `serve_main` (what ``toolwire mcp-serve`` runs). Calls go through
`toolwire.agent.dispatch.Dispatcher`, so a server answers exactly as an `Agent` would: a call
that does not fit its schema gets `toolwire.schema.validate_call`'s message as an error result,
a tool's `ToolError` is its error text, and the coding tools stay inside their workspace. A tool
whose function declares a return type is listed with an output schema and answers with
structured content too; media results go as image, audio and embedded resource blocks; the
``ask_user`` tool (``ask_user=True``) asks the client's user through elicitation
(`toolwire.mcp._served`). Must not import the loop, codecs or the transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import itertools
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, TextIO

from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.stdio import stdio_server
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    CompleteRequestParams,
    GetPromptRequestParams,
    InputRequiredResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    SetLevelRequestParams,
    SubscribeRequestParams,
    SubscriptionsListenRequestParams,
    ToolAnnotations,
    UnsubscribeRequestParams,
)
from mcp_types import Tool as McpTool

from toolwire.agent.dispatch import Dispatcher
from toolwire.errors import ConfigError
from toolwire.http.listen import listening_socket
from toolwire.mcp._catalog import Catalog
from toolwire.mcp._delegate import Delegation, delegated_app
from toolwire.mcp._events import MemoryEventStore, sessions_apart
from toolwire.mcp._guard import bearer_only, need_token
from toolwire.mcp._results import to_mcp_result
from toolwire.mcp._served import Asking, output_schema, structured
from toolwire.mcp.context import Context, enter, leave
from toolwire.mcp.offers import Prompt, Resource
from toolwire.schema.tool import Tool, Toolset
from toolwire.secrets import remember
from toolwire.transcript import ToolCallPart

__all__ = [
    "Transport",
    "build_server",
    "load_offer",
    "load_tools",
    "serve_http",
    "serve_main",
    "serve_stdio",
]

Transport = Literal["stdio", "http"]
ToolSource = Iterable[Tool | Callable[..., Any]] | Mapping[str, Tool] | Tool


def _listed(tool: Tool, schema: dict[str, Any] | None) -> McpTool:
    hints = None
    if tool.read_only:
        hints = ToolAnnotations(read_only_hint=True, idempotent_hint=True)
    elif tool.idempotent:
        hints = ToolAnnotations(idempotent_hint=True)
    return McpTool(name=tool.name, description=tool.description or None,
                   input_schema=dict(tool.input_schema), annotations=hints,
                   output_schema=schema)


def build_server(
    tools: ToolSource,
    *,
    name: str = "toolwire",
    instructions: str | None = None,
    timeout: float | None = 300.0,
    max_output_chars: int = 50_000,
    ask_user: bool = False,
    resources: Iterable[Resource] = (),
    prompts: Iterable[Prompt] = (),
) -> Server[Any]:
    """An MCP server (the SDK's low-level ``Server``) whose tools are ``tools``, with
    ``resources`` and ``prompts`` (`toolwire.mcp.offers`) beside them.

    Each tool is listed with its name, description and the closed input schema a model is
    shown, and an output schema when its function declares a return type (a value that is not
    an object is wrapped as ``{"result": value}``). ``timeout`` (seconds) applies to tools that
    set none; results longer than ``max_output_chars`` are cut, as in an `Agent`.
    ``ask_user=True`` adds an ``ask_user`` tool whose questions go to the client's user as
    elicitation requests. A tool function with a `toolwire.mcp.Context` parameter gets the
    call's context: progress, logs, sampling, elicitation (`toolwire.mcp.context`).
    """
    catalog = Catalog(list(resources), list(prompts))
    given = [tools] if isinstance(tools, Tool) else tools
    asking = Asking() if ask_user else None
    toolset = Toolset([*Toolset(given).values(), *([asking.tool] if asking else [])])
    dispatcher = Dispatcher(toolset, timeout=timeout, max_output_chars=max_output_chars)
    schemas = {tool.name: output_schema(tool) for tool in toolset.values()}
    listing = [_listed(tool, schemas[tool.name][0]) for tool in toolset.values()]
    numbers = itertools.count(1)

    async def list_tools(ctx: ServerRequestContext[Any],
                         params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=listing)

    async def call_tool(ctx: ServerRequestContext[Any],
                        params: CallToolRequestParams) -> CallToolResult | InputRequiredResult:
        call = ToolCallPart(id=f"mcp_{next(numbers)}", name=params.name,
                            arguments=params.arguments)
        context = Context(ctx, params, catalog)
        token = enter(context)
        try:
            [result] = await dispatcher.run([call])
        finally:
            leave(token)
        if context.pending:
            return context.input_required()
        schema, wrapped = schemas.get(params.name, (None, False))
        if schema is None or result.is_error:
            return to_mcp_result(result)
        value = structured(result.text, wrapped)
        if value is None:
            return to_mcp_result(result.__class__(
                call_id=result.call_id, is_error=True,
                content=f"the result of {params.name!r} could not be sent as structured "
                        f"content (it is not whole JSON; it may have been cut at "
                        f"{max_output_chars} characters)"))
        return to_mcp_result(result, value)

    def input_schema(tool: str) -> Mapping[str, Any] | None:
        found = toolset.get(tool)
        return None if found is None else found.input_schema

    return _with_catalog(Server(name, version=_version(), instructions=instructions,
                                on_list_tools=list_tools, on_call_tool=call_tool,
                                get_tool_input_schema=input_schema), catalog)


def _with_catalog(server: Server[Any], catalog: Catalog) -> Server[Any]:
    """``server`` answering for ``catalog``'s resources and prompts, completion, log levels
    and subscriptions, with sealed request state for input-required rounds."""
    add = server.add_request_handler
    add("logging/setLevel", SetLevelRequestParams, catalog.set_level)
    if catalog.resources:
        add("subscriptions/listen", SubscriptionsListenRequestParams, catalog.listen)
        add("resources/list", PaginatedRequestParams, catalog.list_resources)
        add("resources/templates/list", PaginatedRequestParams, catalog.list_templates)
        add("resources/read", ReadResourceRequestParams, catalog.read_resource)
        add("resources/subscribe", SubscribeRequestParams, catalog.subscribe)
        add("resources/unsubscribe", UnsubscribeRequestParams, catalog.unsubscribe)
    if catalog.prompts:
        add("prompts/list", PaginatedRequestParams, catalog.list_prompts)
        add("prompts/get", GetPromptRequestParams, catalog.get_prompt)
    if catalog.prompts or any(r.templated for r in catalog.resources):
        add("completion/complete", CompleteRequestParams, catalog.complete)
    server.middleware.append(RequestStateBoundary(RequestStateSecurity.ephemeral(),
                                                  default_audience=server.name))
    return server


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("toolwire")
    except PackageNotFoundError:
        return ""


def _import(module: str) -> Any:
    if module.endswith(".py") or os.sep in module or "/" in module:
        path = Path(module).resolve()
        if not path.is_file():
            raise ConfigError(f"{module} is not a file")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise ConfigError(f"{module} cannot be imported as a Python file")
        loaded = importlib.util.module_from_spec(spec)
        sys.modules.setdefault(path.stem, loaded)
        try:
            spec.loader.exec_module(loaded)
        except Exception as exc:
            raise _failed_import(module, exc) from None
        return loaded
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise ConfigError(f"cannot import {module!r}: {exc}") from None
    except Exception as exc:
        raise _failed_import(module, exc) from None


def _failed_import(module: str, exc: Exception) -> ConfigError:
    """The error for a tools module whose own code failed while it was imported."""
    where = ""
    if isinstance(exc, SyntaxError):
        where = f" (line {exc.lineno})"
    return ConfigError(f"importing {module} failed{where}: {type(exc).__name__}: {exc}; fix the "
                       "module and try again")


def load_tools(target: str) -> list[Tool]:
    """The tools named by ``target``: ``MODULE:ATTR`` or ``path/to/file.py:ATTR``.

    ATTR may be a list (or mapping) of tools or functions, a `Toolset`, one `Tool`, or a
    function taking no arguments that returns one of those. Without ``:ATTR``, ``TOOLS`` is used.
    The module's folder is the current one, as with ``python -m``. Resources and prompts in
    the list are left out (`load_offer` takes them too).
    """
    return load_offer(target)[0]


def load_offer(target: str) -> tuple[list[Tool], list[Resource], list[Prompt]]:
    """The tools, resources and prompts named by ``target`` (as `load_tools` reads it; the
    list may hold `toolwire.mcp.offers.Resource`s and `Prompt`s beside the tools)."""
    module, _, attr = target.partition(":")
    if target.count(":") > 1 or not module:
        raise ConfigError(f"{target!r} is not MODULE:ATTR (for example my_tools:TOOLS)")
    attr = attr or "TOOLS"
    value = _import(module)
    for part in attr.split("."):
        if not hasattr(value, part):
            raise ConfigError(f"{module} has no attribute {attr!r}")
        value = getattr(value, part)
    if callable(value) and not isinstance(value, Tool | Toolset):
        try:
            value = value()
        except Exception as exc:
            raise ConfigError(f"{target}() failed: {type(exc).__name__}: {exc}") from None
    if isinstance(value, Tool | Resource | Prompt):
        value = [value]
    if isinstance(value, Mapping):
        return list(Toolset(value).values()), [], []
    if isinstance(value, Iterable) and not isinstance(value, str | bytes):
        items = list(value)
        resources = [item for item in items if isinstance(item, Resource)]
        prompts = [item for item in items if isinstance(item, Prompt)]
        tools = [item for item in items if not isinstance(item, Resource | Prompt)]
        return list(Toolset(tools).values()), resources, prompts
    raise ConfigError(f"{target} is a {type(value).__name__}, not a list of tools")


async def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` on this process's stdin and stdout until stdin closes."""
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http(
    server: Server[Any],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    path: str = "/mcp",
    announce: TextIO | None = sys.stderr,
    retry_ms: int = 1000,
    token: str | None = None,
    delegation: Delegation | None = None,
) -> None:
    """Serve ``server`` over streamable HTTP at ``http://HOST:PORT/mcp`` until stopped.

    ``port=0`` takes any free port; the URL is written to ``announce`` once the server
    accepts connections. Streams are resumable (`toolwire.mcp._events`), each session's
    apart: each starts with a priming event telling the client to wait ``retry_ms`` before
    reconnecting. With ``token``, every request must carry ``Authorization: Bearer TOKEN``
    (`toolwire.mcp._guard`); with ``delegation``, tokens come from an authorization server
    (`toolwire.mcp._delegate`); with neither, ``host`` must be a loopback address.
    """
    import uvicorn

    need_token(host, token or delegation)
    options = {"streamable_http_path": path, "host": host, "event_store": MemoryEventStore(),
               "retry_interval": retry_ms}
    app = (delegated_app(server, delegation, **options) if delegation is not None
           else server.streamable_http_app(**options))  # type: ignore[arg-type]
    if token:
        remember(token, "TOOLWIRE_MCP_TOKEN")
        app = bearer_only(app, token)  # type: ignore[assignment]
    try:
        sock = listening_socket(host, port)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    bound = sock.getsockname()[1]
    config = uvicorn.Config(sessions_apart(app), log_level="warning", lifespan="on")
    web = uvicorn.Server(config)

    async def tell() -> None:
        while not web.started:
            await asyncio.sleep(0.01)
        if announce is not None:
            shown = f"[{host}]" if ":" in host else host
            announce.write(f"toolwire mcp-serve: serving MCP at http://{shown}:{bound}{path}\n")
            announce.flush()

    teller = asyncio.ensure_future(tell())
    try:
        await web.serve(sockets=[sock])
    finally:
        teller.cancel()
        sock.close()


def serve_main(
    target: str | None,
    *,
    builtin: str | None = None,
    workdir: str | os.PathLike[str] | None = None,
    transport: Transport = "stdio",
    port: int = 0,
    host: str = "127.0.0.1",
    test_command: str | None = None,
    name: str | None = None,
    ask_user: bool = False,
    token: str | None = None,
    delegation: Delegation | None = None,
) -> int:
    """Serve tools as an MCP server until stopped; what ``toolwire mcp-serve`` runs.

    ``target`` is ``MODULE:ATTR`` (see `load_offer`: tools, resources, prompts);
    ``builtin="coding"`` adds the coding tools confined to ``workdir`` (default: the current
    folder), with ``ask_user`` asking the client's user through elicitation. ``ask_user=True``
    adds that tool to any tools. Over HTTP, ``token`` is the bearer token every request must
    carry, or ``delegation`` the authorization server whose tokens it takes (one of them is
    required when ``host`` is not a loopback address). Returns the exit code.
    """
    tools: list[Tool] = []
    resources: list[Resource] = []
    prompts: list[Prompt] = []
    if builtin is not None:
        if builtin != "coding":
            raise ConfigError(f"unknown built-in tool set {builtin!r}; the one there is: coding")
        from toolwire.tools.coding import coding_tools

        folder = Path(workdir or ".")
        if not folder.is_dir():
            raise ConfigError(f"--workdir {folder} is not a folder; give an existing folder")
        tools.extend(coding_tools(folder, test_command=test_command, include_ask_user=False))
    elif workdir is not None:
        raise ConfigError("--workdir applies to --builtin coding only")
    if target:
        with contextlib.redirect_stdout(sys.stderr):  # stdout carries the protocol alone
            loaded, resources, prompts = load_offer(target)
        tools.extend(loaded)
    if not (tools or resources or prompts):
        raise ConfigError("nothing to serve: give MODULE:ATTR or --builtin coding")
    if transport not in ("stdio", "http"):
        raise ConfigError(f"unknown transport {transport!r}; use stdio or http")
    if transport == "stdio" and (token or delegation):
        raise ConfigError(f"{'--token' if token else '--authorization-server'} is for "
                          "--transport http; over stdio only the program that started the "
                          "server talks to it")
    if token and delegation:
        raise ConfigError("--token and --authorization-server together: give one way to "
                          "check who calls")
    if transport == "http":
        need_token(host, token or delegation)
    server = build_server(tools, name=name or ("toolwire-coding" if builtin else "toolwire"),
                          ask_user=ask_user or builtin is not None, resources=resources,
                          prompts=prompts)
    if transport == "http":
        asyncio.run(serve_http(server, host=host, port=port, token=token,
                               delegation=delegation))
    else:
        asyncio.run(serve_stdio(server))
    return 0
