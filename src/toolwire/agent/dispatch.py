"""From tool calls to tool results: look up, validate, approve, run, and turn failures into values.

Owns `Dispatcher` and the approval types (`Policy`, `Approval`, `ApprovalRequest`,
`Approver`); what is said of calls apart from running them (`render_result`, `cut_off`, ...) is
`toolwire.agent.calls`'. Each call's tool is looked up once and its arguments are read once (the
value its codec parsed is checked, not the text again; see `Toolset.check_call`). Every call
gets exactly one `ToolResultPart`, in call order, whatever happens: a call that does not fit
its tool, a denial, an exception, a timeout or a value that cannot be sent as JSON all come
back as results with ``is_error=True`` whose text tells the model what went wrong. A run's
``deadline`` bounds every call like a timeout: a call still running when it comes is abandoned
with an error result saying so. A tool that returns media (`toolwire.Image` and the like, a
``(bytes, media_type)`` pair, a Pillow image, or a list mixing text and media) gives a result
made of parts. Calls in one batch run concurrently (async tools on the event
loop, sync tools in a thread pool), at most ``max_concurrency`` at a time.

Must not import the loop, codecs or transport: it works on canonical values and `schema.Tool`.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from toolwire.agent.calls import (  # some re-exported (`__all__`): the paths callers import
    call_digest,
    cap_text,
    cut_off,
    error_result,
    render_result,
    repeated_ids,
    unusable,
)
from toolwire.agent.workers import ToolThreads
from toolwire.errors import ToolCallError, ToolError
from toolwire.events import thread_context
from toolwire.media import NEVER_MEDIA, media_content
from toolwire.schema.tool import Tool, Toolset
from toolwire.secrets import Redactor
from toolwire.transcript import TextPart, ToolCallPart, ToolResultPart, replace

Policy = Literal["allow", "ask", "deny", "defer"]
"""What happens before a tool runs: run it, ask the approver first, refuse it, or stop the run
to wait for a decision given when it is resumed (`Dispatcher.decisions`)."""

POLICIES: tuple[Policy, ...] = ("allow", "ask", "deny", "defer")


@dataclass(frozen=True, slots=True)
class Approval:
    """An approver's answer. A denial's ``reason``, and ``by`` (who decided) when given, are
    passed on to the model."""

    approved: bool
    reason: str | None = None
    by: str | None = None

    @classmethod
    def allow(cls, by: str | None = None) -> Approval:
        return cls(True, None, by)

    @classmethod
    def deny(cls, reason: str | None = None, by: str | None = None) -> Approval:
        return cls(False, reason, by)


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What an approver is asked about: the call as the model sent it and its checked arguments."""

    call: ToolCallPart
    tool: Tool
    arguments: Mapping[str, Any]


Approver: TypeAlias = Callable[
    [ApprovalRequest], "Approval | bool | Awaitable[Approval | bool]"
]
"""Decides a call whose tool has the ``ask`` policy; ``True``/``False`` mean allow/deny.

Calls needing approval are asked about one at a time, in call order, before any call of the
reply runs. A plain function runs in a worker thread (a terminal prompt does not block the
event loop); an async one runs on the loop."""

CallHook: TypeAlias = Callable[[ToolCallPart], None]
ResultHook: TypeAlias = Callable[[ToolCallPart, ToolResultPart, float], None]


def _declined(name: str, answer: Approval) -> str:
    text = (f"This call to {name!r} was denied by {answer.by}." if answer.by
            else f"The user declined this call to {name!r}.")
    if answer.reason:
        text += f" Their reason: {answer.reason}"
    return text


class Dispatcher:
    """Runs the calls of one assistant reply and answers each of them.

    ``policy`` is one `Policy` for every tool or a mapping from tool name to policy (``"*"``
    sets the default, which is otherwise ``allow``). ``timeout`` (seconds) applies to tools that
    set none. A sync tool that times out keeps running in its thread; its result is discarded.
    ``redact`` takes secrets out of the text of every result a tool gives (default: a
    `toolwire.secrets.Redactor` over the environment as it is when the dispatcher is made).
    """

    def __init__(
        self,
        tools: Toolset | Sequence[Tool],
        *,
        policy: Policy | Mapping[str, Policy] = "allow",
        approve: Approver | None = None,
        max_concurrency: int = 8,
        timeout: float | None = 300.0,
        max_output_chars: int = 50_000,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.tools = tools if isinstance(tools, Toolset) else Toolset(tools)
        if isinstance(policy, str):
            self._default: Policy = policy
            self._policies: dict[str, Policy] = {}
        else:
            self._policies = dict(policy)
            self._default = self._policies.pop("*", "allow")
        for name, value in [("*", self._default), *self._policies.items()]:
            if value not in POLICIES:
                raise ValueError(f"approval policy for {name!r} is {value!r}; use {POLICIES}")
        self.defers = self._default == "defer" or "defer" in self._policies.values()
        """Whether any tool's policy is ``defer`` (else no call ever waits: `awaiting`)."""
        self.approve = approve
        self.max_concurrency = max_concurrency
        self.timeout = timeout
        self.max_output_chars = max_output_chars
        self.redact = redact if redact is not None else Redactor.shared()
        self.decisions: dict[str, Approval] = {}
        """Decisions on ``defer`` calls by call id, given when a waiting run is resumed; `bind`
        ties each to the exact call it answers, and they leave this mapping then."""
        self._bound: dict[str, Approval] = {}  # by `call_digest`, each used once
        self._threads: ToolThreads | None = None
        self._slots: asyncio.Semaphore | None = None
        self._slots_loop: asyncio.AbstractEventLoop | None = None

    def add(self, tools: Sequence[Tool]) -> None:
        """Answer calls of ``tools`` too (tools a run was given while it went on); a tool of
        a name already known replaces the old one."""
        known = dict(self.tools.items())
        known.update((t.name, t) for t in tools)
        self.tools = Toolset(known)

    def policy(self, name: str) -> Policy:
        return self._policies.get(name, self._default)

    def bind(self, calls: Sequence[ToolCallPart]) -> None:
        """Tie each decision in `decisions` to the one of ``calls`` whose id it names, by a
        digest of that call (`call_digest`); decisions bound before and decisions for no call
        of ``calls`` are dropped. A bound decision answers that exact call once: a later call
        reusing the id, or the same call again, waits for a decision of its own. Calls that
        share an id (in a log an older toolwire wrote) get none: one decision names one call."""
        shared = set(repeated_ids(calls))
        self._bound = {call_digest(c): self.decisions[c.id] for c in calls
                       if c.id in self.decisions and c.id not in shared}
        self.decisions.clear()

    def awaiting(self, calls: Sequence[ToolCallPart]) -> list[ToolCallPart]:
        """The calls whose tool's policy is ``defer`` and that no decision answers yet."""
        if not self.defers:
            return []  # no tool waits for decisions
        return [c for c in calls
                if self.policy(c.name) == "defer" and call_digest(c) not in self._bound
                and c.name in self.tools]

    async def run(
        self,
        calls: Sequence[ToolCallPart],
        *,
        on_start: CallHook | None = None,
        on_end: ResultHook | None = None,
        deadline: float | None = None,
        early: Mapping[int, Awaitable[ToolResultPart]] | None = None,
    ) -> list[ToolResultPart]:
        """One result per call, in call order; ``deadline`` (`time.monotonic`) ends calls still
        running then, each with an error result. ``early`` maps the index of a call that was
        started already (checked, approved and running: see `start`) to its result, awaited
        here in its place."""
        if len(calls) == 1 and not early:  # the usual turn: one call, run here
            call = calls[0]
            admitted = self._checked(call)  # no approval to ask: no coroutine to await
            if type(admitted) is tuple and not self._allows(admitted[0]):
                admitted = await self._asked(call, *admitted, deadline)
            if isinstance(admitted, ToolResultPart):
                if on_end is not None:
                    on_end(call, admitted, 0.0)
                return [admitted]
            return [await self._timed(call, *admitted, on_start, on_end, deadline)]
        results: list[ToolResultPart | None] = [None] * len(calls)
        ready: list[tuple[int, Tool, dict[str, Any]]] = []
        for i, call in enumerate(calls):
            if early is not None and i in early:
                continue
            admitted = self._checked(call)
            if type(admitted) is tuple and not self._allows(admitted[0]):
                admitted = await self._asked(call, *admitted, deadline)
            if isinstance(admitted, ToolResultPart):
                results[i] = admitted
            else:
                ready.append((i, *admitted))
        for i, result in enumerate(results):
            if result is not None and on_end is not None:
                on_end(calls[i], result, 0.0)
        if len(ready) == 1 and not early:
            i, tool, args = ready[0]
            results[i] = await self._timed(calls[i], tool, args, on_start, on_end, deadline)
            return [r for r in results if r is not None]
        waits: list[tuple[int, Awaitable[ToolResultPart]]] = list((early or {}).items())
        waits += [(i, self._limited(calls[i], tool, args, on_start, on_end, deadline))
                  for i, tool, args in ready]
        if waits:
            done = await asyncio.gather(*(w for _, w in waits))
            for (i, _), result in zip(waits, done, strict=True):
                results[i] = result
        return [r for r in results if r is not None]

    def allowed(self, call: ToolCallPart) -> tuple[Tool, dict[str, Any]] | ToolResultPart | None:
        """What `admit` gives for ``call`` when it asks no one: the error result of a call
        that does not check, the tool and arguments of one whose policy is ``allow``; None
        when the call's policy must be asked first (`admit` then)."""
        admitted = self._checked(call)
        return admitted if type(admitted) is not tuple or self._allows(admitted[0]) else None

    def _checked(self, call: ToolCallPart) -> tuple[Tool, dict[str, Any]] | ToolResultPart:
        """The tool and checked arguments of ``call``, else the error result that answers it."""
        try:
            return self.tools.check_call(call)
        except ToolCallError as exc:
            return error_result(call, str(exc))

    def _allows(self, tool: Tool) -> bool:
        """Whether ``tool``'s policy lets its calls run without asking."""
        return self._policies.get(tool.name, self._default) == "allow"

    async def admit(
        self, call: ToolCallPart, deadline: float | None = None
    ) -> tuple[Tool, dict[str, Any]] | ToolResultPart:
        """The tool and checked arguments of a call that may run (asking for approval when its
        policy says so), else the error result that answers it."""
        admitted = self._checked(call)
        if type(admitted) is not tuple or self._allows(admitted[0]):
            return admitted  # a refusal, or a call whose policy asks no one
        return await self._asked(call, *admitted, deadline)

    async def _asked(self, call: ToolCallPart, tool: Tool, args: dict[str, Any],
                     deadline: float | None) -> tuple[Tool, dict[str, Any]] | ToolResultPart:
        """`admit` of a checked call whose policy must be asked: its approval awaited."""
        refusal = await self._check_approval(call, tool, args, deadline)
        if refusal is not None:
            return error_result(call, refusal)
        return tool, args

    def may_start_early(self, call: ToolCallPart) -> bool:
        """Whether ``call`` may start before its reply is whole: its tool is marked
        ``read_only`` and its policy lets it run (``allow``, or ``ask`` once approved)."""
        tool = self.tools.get(call.name)
        return tool is not None and tool.read_only and self.policy(tool.name) != "deny"

    async def start(
        self,
        call: ToolCallPart,
        admitted: tuple[Tool, dict[str, Any]] | ToolResultPart,
        *,
        on_start: CallHook | None = None,
        on_end: ResultHook | None = None,
        deadline: float | None = None,
    ) -> ToolResultPart:
        """Run one call `admit` let through (or pass on the result that refused it), within
        the dispatcher's concurrency limit, telling the hooks of its start and end."""
        if isinstance(admitted, ToolResultPart):
            if on_end is not None:
                on_end(call, admitted, 0.0)
            return admitted
        tool, args = admitted
        return await self._limited(call, tool, args, on_start, on_end, deadline)

    async def _check_approval(
        self, call: ToolCallPart, tool: Tool, args: dict[str, Any], deadline: float | None = None
    ) -> str | None:
        """None to go ahead, else the error text for the model, for a call whose tool's policy
        is not ``allow`` (those never get here: `_allows`). The approver is waited for no
        longer than ``deadline`` (`time.monotonic`), the run's time limit."""
        policy = self.policy(tool.name)
        if policy == "deny":
            return (f"The run's approval policy declined this call: the tool {tool.name!r} "
                    "is not allowed to run (no one was asked).")
        if policy == "defer":
            decided = self._bound.pop(call_digest(call), None)
            if decided is None:
                return (f"The call to {tool.name!r} waited for a decision, but the run was "
                        "resumed without one for it, so it was not run.")
            return None if decided.approved else _declined(tool.name, decided)
        if self.approve is None:
            return (
                f"The call to {tool.name!r} needs the user's approval, but no user is "
                "available to give it, so it was not run."
            )
        asked = ApprovalRequest(call=call, tool=tool, arguments=args)
        left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        try:
            async with asyncio.timeout(left) as timer:
                if inspect.iscoroutinefunction(self.approve):
                    answer = await self.approve(asked)
                else:  # a prompt may block: keep the event loop free
                    answer = await asyncio.to_thread(self.approve, asked)
                if inspect.isawaitable(answer):
                    answer = await answer
        except TimeoutError as exc:
            if timer.expired():
                return (f"The call to {tool.name!r} was not run: the run's time limit ran out "
                        "while waiting for the user's approval.")
            return f"The call to {tool.name!r} was not run: asking the user for approval " \
                   f"failed ({type(exc).__name__}: {exc})."
        except Exception as exc:
            return f"The call to {tool.name!r} was not run: asking the user for approval " \
                   f"failed ({type(exc).__name__}: {exc})."
        if isinstance(answer, bool):
            answer = Approval(answer)
        elif not isinstance(answer, Approval):
            return (f"The call to {tool.name!r} was not run: the approver answered "
                    f"{type(answer).__name__}, not True, False or an Approval.")
        if answer.approved:
            return None
        return _declined(tool.name, answer)

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots_loop is not loop:
            self._slots = asyncio.Semaphore(self.max_concurrency)
            self._slots_loop = loop
        return self._slots

    async def _limited(
        self,
        call: ToolCallPart,
        tool: Tool,
        args: dict[str, Any],
        on_start: CallHook | None,
        on_end: ResultHook | None,
        deadline: float | None,
    ) -> ToolResultPart:
        async with self._semaphore():
            return await self._timed(call, tool, args, on_start, on_end, deadline)

    async def _timed(
        self,
        call: ToolCallPart,
        tool: Tool,
        args: dict[str, Any],
        on_start: CallHook | None,
        on_end: ResultHook | None,
        deadline: float | None,
    ) -> ToolResultPart:
        if on_start is not None:
            on_start(call)
        started = time.perf_counter()
        result = await self.execute(call, tool, args, deadline)
        content = result.content
        if not isinstance(content, str):
            result = self._redacted_parts(result)
        elif (redacted := self.redact(content)) != content:
            result = ToolResultPart(call_id=result.call_id, content=redacted,
                                    is_error=result.is_error, name=result.name)
        if on_end is not None:
            on_end(call, result, time.perf_counter() - started)
        return result

    async def execute(
        self, call: ToolCallPart, tool: Tool, args: dict[str, Any], deadline: float | None = None
    ) -> ToolResultPart:
        """Run one validated, approved call and make its result; never raises `Exception`.

        The call may take the tool's own timeout (else the dispatcher's), and never beyond
        ``deadline`` (`time.monotonic`), the run's time limit."""
        limit = tool.timeout if tool.timeout is not None else self.timeout
        run_ends = False
        if deadline is not None:
            left = max(deadline - time.monotonic(), 0.0)
            if limit is None or left < limit:
                limit, run_ends = left, True
        try:
            async with asyncio.timeout(limit) as timer:
                if tool.is_async:
                    value = await tool.call(args)
                else:
                    if self._threads is None:
                        self._threads = ToolThreads(self.max_concurrency, "toolwire-tool")
                    loop = asyncio.get_running_loop()
                    # in this task's context, so what the tool emits reaches the run
                    value = await self._threads.run(loop, thread_context(loop), tool.call, args)
                    # a plain value is never awaitable: no abstract check for it
                    if type(value) not in NEVER_MEDIA and inspect.isawaitable(value):
                        value = await value
        except (ToolError, ToolCallError) as exc:
            return error_result(call, str(exc))
        except TimeoutError as exc:
            if timer.expired():
                if run_ends:
                    return error_result(
                        call, f"Tool {tool.name!r} was still running when the run's time limit "
                        "ran out; it was abandoned and gave no result."
                    )
                return error_result(
                    call, f"Tool {tool.name!r} did not finish within {limit:g} seconds; "
                    "it was abandoned and gave no result."
                )
            return error_result(call, f"Tool {tool.name!r} failed: {type(exc).__name__}: {exc}")
        except (Exception, SystemExit) as exc:  # a tool that calls sys.exit() ends no run
            return error_result(call, f"Tool {tool.name!r} failed: {type(exc).__name__}: {exc}")
        try:
            media = None if type(value) in NEVER_MEDIA else media_content(value, render_result)
            if media is not None:
                return ToolResultPart(call_id=call.id, content=media, name=call.name)
            text = render_result(value)
        except Exception as exc:  # not JSON, nested too deep, a __str__ that raises...
            return error_result(
                call, f"Tool {tool.name!r} returned a {type(value).__name__} value that cannot "
                f"be sent as JSON ({exc})."
            )
        return ToolResultPart(
            call_id=call.id, content=cap_text(text, self.max_output_chars), name=call.name
        )

    def _redacted_parts(self, result: ToolResultPart) -> ToolResultPart:
        """A result made of parts with the secrets taken out of its text parts."""
        redacted = tuple(replace(p, text=self.redact(p.text)) if isinstance(p, TextPart)
                         else p for p in result.content)
        return result if redacted == result.content else replace(result, content=redacted)

    def close(self) -> None:
        """Release the thread pool (tools still running in it are not waited for)."""
        if self._threads is not None:
            self._threads.close()
            self._threads = None


__all__ = [
    "POLICIES",
    "Approval",
    "ApprovalRequest",
    "Approver",
    "Dispatcher",
    "Policy",
    "call_digest",
    "cap_text",
    "cut_off",
    "render_result",
    "repeated_ids",
    "unusable",
]
