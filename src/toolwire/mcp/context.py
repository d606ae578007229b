"""What a served tool may ask of the MCP client while a call runs: `Context`.

A tool function takes one by declaring a parameter annotated ``toolwire.mcp.Context`` (or
``Context | None``); the parameter is left out of the tool's input schema and filled in for each
call (`toolwire.schema.derive.injected_provider`). Served by ``toolwire mcp-serve`` it reports
progress, sends log messages, asks the client's model for a completion (sampling) and the
client's user for input (elicitation, a form or a URL), and says a resource changed. Outside an
MCP server (the same tool in an `Agent`) progress and logs go nowhere and questions raise
`ToolError`, so one tool serves both.

Each protocol generation is spoken as it defines itself: up to 2025-11-25 sampling and
elicitation are requests the server sends while the call runs; from 2026-07-28 they are input
requests in an ``InputRequiredResult``, and the client's retry carries the answers (the tool
runs again from the start and gets each earlier answer at once; earlier rounds' answers ride in
the sealed ``requestState``). Must not import the loop, codecs or the transport.
"""

from __future__ import annotations

import contextvars
import json
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.message import ServerMessageMetadata
from mcp_types import (
    CallToolRequestParams,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
    SamplingMessage,
    TextContent,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from toolwire.errors import ToolError

__all__ = ["LEVELS", "Context", "Level"]

Level = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
LEVELS: tuple[Level, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert",
                             "emergency")
"""The log levels, least severe first."""

_NOT_SERVED = ("this tool is not running under an MCP server, so there is no MCP client to ask; "
               "go on without it")


class _Hooks:
    """What the server lends a call's context: the log level a client set, and resource
    update fan-out. `toolwire.mcp._catalog.Catalog` is the real one."""

    def min_level(self, ctx: ServerRequestContext[Any]) -> Level | None:
        return None

    async def resource_updated(self, uri: str) -> None:
        return None


class Context:
    """The MCP client of the call in progress: progress, logs, sampling, questions.

    Declare ``ctx: Context`` in a tool function's parameters to get one. Its methods are
    coroutines, for ``async def`` tools.
    """

    def __init__(self, request: ServerRequestContext[Any] | None = None,
                 params: CallToolRequestParams | None = None, hooks: _Hooks | None = None) -> None:
        self._request = request
        self._hooks = hooks or _Hooks()
        self._responses = dict((params.input_responses or {}) if params else {})
        self._earlier: dict[str, Any] = _earlier(params.request_state if params else None)
        self._asked = 0
        self.pending: dict[str, Any] = {}
        """The input requests a 2026-07-28 call stopped at (the server answers with them)."""

    @classmethod
    def __toolwire_inject__(cls) -> Context:
        return _CURRENT.get() or cls()

    @property
    def served(self) -> bool:
        """Whether the call came from an MCP client (False in an `Agent`)."""
        return self._request is not None

    @property
    def protocol_version(self) -> str | None:
        """The protocol version of the client's connection (None when not served)."""
        return self._request.protocol_version if self._request else None

    @property
    def modern(self) -> bool:
        """Whether the connection speaks the 2026-07-28 generation (input-required results)."""
        return self.protocol_version in MODERN_PROTOCOL_VERSIONS

    async def progress(self, progress: float, total: float | None = None,
                       message: str | None = None) -> None:
        """Tell the client how far the call has got (when it asked for progress)."""
        if self._request is not None:
            await self._request.session.report_progress(progress, total, message)

    async def log(self, level: Level, data: Any, *, logger: str | None = None) -> None:
        """Send a log message to the client, unless it asked for only more severe ones
        (``logging/setLevel``; on 2026-07-28, the level the request itself opted in to)."""
        if level not in LEVELS:
            raise ValueError(f"{level!r} is not a log level; use one of {', '.join(LEVELS)}")
        if self._request is None:
            return
        floor = self._hooks.min_level(self._request)
        if floor is not None and LEVELS.index(level) < LEVELS.index(floor):
            return
        with warnings.catch_warnings():  # deprecated from 2026-07-28, still the older ones' own
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await self._request.session.send_log_message(  # type: ignore[deprecated]
                level, data, logger, related_request_id=self._request.request_id)

    async def sample(self, prompt: str | Sequence[SamplingMessage], *, max_tokens: int = 1000,
                     system: str | None = None, temperature: float | None = None) -> str:
        """Ask the client's model for a completion; returns its text.

        ``prompt`` is one user message, or the SDK's ``SamplingMessage`` list. Raises
        `ToolError` when the client cannot or will not sample.
        """
        messages = ([SamplingMessage(role="user", content=TextContent(text=prompt))]
                    if isinstance(prompt, str) else list(prompt))
        params = CreateMessageRequestParams(messages=messages, max_tokens=max_tokens,
                                            system_prompt=system, temperature=temperature)
        answer = await self._ask("sample", CreateMessageRequest(params=params),
                                 CreateMessageResult)
        content = answer.content
        blocks = content if isinstance(content, list) else [content]
        return "\n".join(getattr(b, "text", f"[{getattr(b, 'type', 'other')} content]")
                         for b in blocks)

    async def elicit(self, message: str, schema: Mapping[str, Any]) -> ElicitResult:
        """Ask the client's user to fill in a form; ``schema`` is the requested schema (an
        object of flat fields: strings, numbers, booleans, enums single or multiple, with
        titles, descriptions and defaults). Returns the SDK's ``ElicitResult``: ``action`` is
        ``accept`` (with ``content``), ``decline`` or ``cancel``."""
        params = ElicitRequestFormParams(message=message, requested_schema=dict(schema))
        answer: ElicitResult = await self._ask("elicit", ElicitRequest(params=params),
                                               ElicitResult)
        return answer

    async def elicit_url(self, message: str, url: str, elicitation_id: str) -> ElicitResult:
        """Ask the client's user to visit ``url`` (URL mode): the answer says whether they
        agreed to go; what happens there stays between the user and that page."""
        params = ElicitRequestURLParams(message=message, url=url, elicitation_id=elicitation_id)
        answer: ElicitResult = await self._ask("elicit", ElicitRequest(params=params),
                                               ElicitResult)
        return answer

    async def resource_updated(self, uri: str) -> None:
        """Tell the clients that subscribed to ``uri`` that it changed."""
        await self._hooks.resource_updated(uri)

    async def close_stream(self) -> None:
        """End this call's SSE stream now (streamable HTTP with resumability): the client
        reconnects after the server's ``retry`` delay and gets the rest of the call."""
        closing = self._request.close_sse_stream if self._request else None
        if closing is not None:
            await closing()

    async def _ask(self, kind: str, request: Any, answer_type: Any) -> Any:
        if self._request is None:
            raise ToolError(_NOT_SERVED)
        caps = self._request.session.client_capabilities
        able = caps is not None and (caps.sampling if kind == "sample" else caps.elicitation)
        if not able:
            what = "sampling" if kind == "sample" else "elicitation"
            raise ToolError(f"the MCP client does not offer {what}, so it cannot be asked; go "
                            "on without it")
        self._asked += 1
        key = f"{kind}-{self._asked}"
        if not self.modern:
            related = ServerMessageMetadata(related_request_id=self._request.request_id)
            try:
                return await self._request.session.send_request(request, answer_type,
                                                                metadata=related)
            except Exception as exc:
                raise ToolError(f"the MCP client could not be asked ({type(exc).__name__}: "
                                f"{exc}); go on without it") from None
        found = _valid(self._responses.get(key, self._earlier.get(key)), answer_type)
        if found is not None:
            self._earlier[key] = found
            return found
        self.pending[key] = request  # not answered yet, or not answered as asked: ask again
        raise ToolError("the MCP client is asked for input; the call runs again with it")

    def input_required(self) -> InputRequiredResult:
        """The result a 2026-07-28 call ends with when the tool asked something new."""
        known = {**self._earlier, **self._responses}
        state = json.dumps({key: _dumped(value) for key, value in known.items()})
        return InputRequiredResult(input_requests=self.pending, request_state=state)


def _valid(found: Any, answer_type: Any) -> Any:
    """``found`` as an ``answer_type`` (None when it is missing or is some other answer)."""
    if found is None or isinstance(found, answer_type):
        return found
    try:
        return answer_type.model_validate(_dumped(found))
    except ValidationError:
        return None


def _dumped(value: Any) -> Any:
    return value.model_dump(by_alias=True, mode="json", exclude_none=True) \
        if hasattr(value, "model_dump") else value


def _earlier(state: str | None) -> dict[str, Any]:
    """The answers of earlier rounds, from the (already verified) request state."""
    if not state:
        return {}
    try:
        loaded = json.loads(state)
    except ValueError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


_CURRENT: contextvars.ContextVar[Context | None] = contextvars.ContextVar(
    "toolwire_mcp_context", default=None)


def enter(context: Context) -> contextvars.Token[Context | None]:
    """Make ``context`` the one tools of the current task get."""
    return _CURRENT.set(context)


def leave(token: contextvars.Token[Context | None]) -> None:
    _CURRENT.reset(token)
