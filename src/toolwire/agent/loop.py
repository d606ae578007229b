"""The agent loop: ask the model, answer every call it makes, repeat until something ends the run.

Owns `Agent`; re-exports the run's values (`AgentRun`, `Step`, `RunResult`, `RunStop`) from
`toolwire.agent.run`. The loop itself is `Agent._loop`, one async generator: limits are
checked before each model call; the reply is appended exactly as it came; then exactly one
result per call, in call order, goes into one tool message. Whatever the model raises that
toolwire names (`ProviderError`, `WireFormatError`) and a reply that holds nothing end the run
with a stop of their own; ``time_limit`` also bounds the model call and the tools in progress
(`toolwire.agent.asking.ask`, the dispatcher's ``deadline``). Each step says what comes next, and
the run's `RunResult.stop` says why it ended. `Agent.run` is a thin sync wrapper over
`Agent.arun`, which drains `Agent.steps`.

Watching a run step by step (`Agent.steps` returns an `AgentRun`, an async iterator)::

    run = agent.steps("Fix the failing test")
    async for step in run:
        print(step.turn, [c.name for c in step.reply.tool_calls], step.usage.total_tokens)
        if step.turn == 5:
            run.stop("five turns are enough here")  # ends before the next model call
    print(run.result.stop, run.result.answer)

Everything a run reports goes one way: the loop gives each `toolwire.events` event to
`RunState.emit`, which hands it to the run's listeners (its run log, then ``on_event``). While
the loop waits on the model it listens (`toolwire.events.listen`) with that same function, so
the model's retries and wire notes reach this run and no other run sharing the model.

The model call itself is `toolwire.agent.asking`'s, what a turn does with the reply it kept
(its calls answered, the next step decided) `toolwire.agent.answer`'s; tool calls are run by
`toolwire.agent.dispatch`; structured output lives in
`toolwire.agent.output`, starting and resuming a run in `toolwire.agent.resume` (neither imports
this module). Must not import codecs, the transport or the client: the model is anything with
the `toolwire.protocol.Model` protocol.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar, Unpack, overload

from toolwire.agent.answer import abandon, answer, run_calls
from toolwire.agent.asking import ask, call_model, warm
from toolwire.agent.compaction import (
    Compaction,
    Compactor,
    Keeper,
    cache_setting,
    compaction_setting,
)
from toolwire.agent.dispatch import Approval, Dispatcher, unusable
from toolwire.agent.early import TurnWatch
from toolwire.agent.resume import resume_state, start_state
from toolwire.agent.run import (
    AgentRun,
    Continue,
    Next,
    OutputType,
    RunResult,
    RunState,
    RunStop,
    Step,
    Task,
    error_stop,
    task_messages,
)
from toolwire.agent.settings import (
    Limits,
    Output,
    RequestSettings,
    Shorthand,
    ToolPolicy,
    settle,
)
from toolwire.agent.toollist import ToolList, defer_tools
from toolwire.errors import ContextLengthError, ProviderError, WireFormatError
from toolwire.protocol import (
    Model,
    ReleasingModel,
    as_model,
    model_name,
    native_search,
    provider_model,
)
from toolwire.schema.tool import Tool, Toolset
from toolwire.telemetry.settings import Telemetry, current, make
from toolwire.transcript import Cache, ToolCallPart, ToolResultPart

T = TypeVar("T")

_WITHIN_LIMITS = Continue("no limit is reached")


class Agent:
    """A model, its tools and the rules of the loop; reusable for many runs, also at once.

    ``model`` is a `toolwire.Model` or a model id; ``tools`` are `Tool`s or functions (both
    may also be given by position); ``system`` is the system prompt. The rest comes in four
    groups, each a frozen settings object of `toolwire.agent.settings`: ``limits`` (`Limits`:
    turns, tokens, cost, time), ``request`` (`RequestSettings`: what every model call asks
    for, streaming, caching), ``tool_policy`` (`ToolPolicy`: approval, timeouts, concurrency,
    eager and deferred tools) and ``output`` (`Output`: structured output). Each field of a
    group may also be given as a keyword of its own, a shorthand
    (`toolwire.agent.settings.SHORTHAND`: ``max_turns=5`` is ``limits=Limits(max_turns=5)``),
    but not together with its group's object.

    ``on_event`` is given every `toolwire.events` event of each run as it happens: the stream
    events, each message, request, retry, reply, tool start and end, and the stop.
    ``instrument=True`` traces the agent's runs with OpenTelemetry, ``False`` never, and None
    (the default) when `toolwire.instrument` was called (see `toolwire.telemetry.settings`).
    ``log`` is a run log path, one run per file (see `toolwire.agent.runlog`); ``arun(log=...)``
    sets one per run. ``context`` (what a resume in another process needs to rebuild the agent:
    its folder, tool set, sandbox...) goes in the log's header. ``compaction`` and
    ``context_window`` say how the history is kept within the model's context (see
    `toolwire.agent.compaction`).
    """

    def __init__(
        self,
        model: Model | str,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        *,
        system: str | None = None,
        limits: Limits | None = None,
        request: RequestSettings | None = None,
        tool_policy: ToolPolicy | None = None,
        output: Output | None = None,
        on_event: Callable[[object], None] | None = None,
        log: str | os.PathLike[str] | None = None,
        instrument: bool | Telemetry | None = None,
        context: Mapping[str, Any] | None = None,
        context_window: int | None = None,
        compaction: Compaction | str | Compactor | None = "clear",
        **shorthand: Unpack[Shorthand],
    ) -> None:
        self.limits, self.request, self.tool_policy, self.output = settle(
            {"limits": limits, "request": request, "tool_policy": tool_policy,
             "output": output}, shorthand)
        policy = self.tool_policy
        self.model = model = as_model(model)
        self.context = dict(context or {})
        toolset = Toolset(tools)
        self.tools, self.specs, self.tool_search = defer_tools(
            tuple(toolset.values()), policy.deferred, policy.defer_after,
            native=native_search(model))
        self.tool_sources = tuple(policy.sources)
        if self.tool_search is not None:
            toolset = Toolset([*toolset.values(), self.tool_search.tool])
        self.system = system
        self.on_event = on_event
        self.log = log
        self.instrument = make() if instrument is True and current() is None else instrument
        self.dispatcher = Dispatcher(
            toolset, policy=policy.approval, approve=policy.approve,
            max_concurrency=policy.max_concurrency, timeout=policy.timeout,
            max_output_chars=policy.max_output_chars,
        )
        self.cache: Cache | None = cache_setting(self.request.cache, provider_model(model),
                                                 system, self.specs)
        self.keeper = Keeper(model, compaction_setting(compaction), context_window)

    def run_tools(self) -> ToolList | None:
        """A new run's tool list, when it can grow (`toolwire.agent.toollist`)."""
        has = self.tool_search is not None or self.tool_sources
        return ToolList(self.tool_search, self.tool_sources, self.dispatcher.add) if has else None

    @property
    def settings(self) -> dict[str, Any]:
        """The limits a run log's header keeps."""
        return {
            "max_turns": self.limits.max_turns, "token_budget": self.limits.token_budget,
            "cost_budget": self.limits.cost_budget, "time_limit": self.limits.time_limit,
            "can_force_tool": self.output.can_force_tool,
        }

    # ------------------------------------------------------------------ entry points

    @overload
    def steps(self, task: Task, *, output: type[T], log: Any = None) -> AgentRun[T]: ...
    @overload
    def steps(
        self, task: Task, *, output: Mapping[str, Any] | None = None, log: Any = None
    ) -> AgentRun[Any]: ...

    def steps(
        self,
        task: Task,
        *,
        output: OutputType | None = None,
        log: str | os.PathLike[str] | None = None,
    ) -> AgentRun[Any]:
        """Start a run and return it as an async iterator of `Step`, one per model call.

        No model call is made until the first step is awaited. Between steps the caller may log,
        inspect ``run.messages`` or call ``run.stop()``; ``run.result`` is set once the
        iteration ends (see `AgentRun`).
        """
        log = log if log is not None else self.log
        output = output if output is not None else self.output.type
        state = start_state(self, task_messages(task), output, log)
        return AgentRun(state, self._loop(state))

    @overload
    async def arun(self, task: Task, *, output: type[T], log: Any = None) -> RunResult[T]: ...
    @overload
    async def arun(
        self, task: Task, *, output: Mapping[str, Any] | None = None, log: Any = None
    ) -> RunResult[Any]: ...

    async def arun(
        self,
        task: Task,
        *,
        output: OutputType | None = None,
        log: str | os.PathLike[str] | None = None,
    ) -> RunResult[Any]:
        """Run until something ends the run, and say what did."""
        return await self.steps(task, output=output, log=log).drain()

    @overload
    def run(self, task: Task, *, output: type[T], log: Any = None) -> RunResult[T]: ...
    @overload
    def run(
        self, task: Task, *, output: Mapping[str, Any] | None = None, log: Any = None
    ) -> RunResult[Any]: ...

    def run(
        self,
        task: Task,
        *,
        output: OutputType | None = None,
        log: str | os.PathLike[str] | None = None,
    ) -> RunResult[Any]:
        """`arun` for code without an event loop (see `_own_loop`)."""
        _no_running_loop("run")
        return asyncio.run(self._own_loop(self.arun(task, output=output, log=log)))

    async def aresume(
        self, log: str | os.PathLike[str], *, output: OutputType | None = None,
        decisions: Mapping[str, Approval | bool] | None = None, message: Task | None = None,
    ) -> RunResult[Any]:
        """Continue the run recorded in ``log`` (see `toolwire.agent.resume.resume_state`);
        ``decisions`` answer, by call id, the calls a run stopped to wait for; ``message`` (the
        user's next words) goes on after the history, also from a run that had answered."""
        for call_id, decided in (decisions or {}).items():
            self.dispatcher.decisions[call_id] = (
                decided if isinstance(decided, Approval) else Approval(decided))
        more = task_messages(message) if message is not None else ()
        output = output if output is not None else self.output.type
        state = await resume_state(self, log, output, self._run_calls, more)
        if state.result is not None:
            return state.result
        return await AgentRun[Any](state, self._loop(state)).drain()

    def resume(
        self, log: str | os.PathLike[str], *, output: OutputType | None = None,
        decisions: Mapping[str, Approval | bool] | None = None,
    ) -> RunResult[Any]:
        """`aresume` for code without an event loop (see `_own_loop`)."""
        _no_running_loop("resume")
        return asyncio.run(self._own_loop(self.aresume(log, output=output,
                                                       decisions=decisions)))

    async def _own_loop(self, run: Awaitable[RunResult[Any]]) -> RunResult[Any]:
        """Await ``run`` in an event loop made for it, then let the model give back what it
        holds in that loop (its ``release``, when it has one: open connections, which would
        outlive the loop), as the loop ends with the run."""
        try:
            return await run
        finally:
            if isinstance(self.model, ReleasingModel):
                await self.model.release()

    # ------------------------------------------------------------------ the loop

    async def _loop(self, s: RunState) -> AsyncIterator[Step]:
        if self.limits.time_limit is not None:
            s.deadline = s.started + self.limits.time_limit
        stream = self.request.stream
        eager = self.tool_policy.eager and stream
        try:
            while True:
                match self._limit_reached(s):
                    case RunStop() as stop:
                        s.finish(stop)
                        return
                if not self.keeper.idle:  # a history that is never compacted asks nothing
                    await self.keeper.before_call(s)
                request = s.next_request()
                started = time.perf_counter()
                watch = TurnWatch(s.turns + 1, s.emit, self.dispatcher, eager=eager,
                                  deadline=s.deadline, notes=s.notes
                                  ) if eager or s.listeners else None  # see `asking`
                try:
                    emit = s.emit if watch is None else watch.emit
                    reply = await (call_model(self.model, request, emit, stream)
                                   if s.deadline is None else ask(
                                       self.model, request, emit, stream=stream,
                                       deadline=s.deadline))
                except (ProviderError, WireFormatError) as exc:
                    abandon(watch, f"its reply failed ({type(exc).__name__})")
                    if isinstance(exc, ContextLengthError) and await self.keeper.overflowed(
                            s, exc):
                        continue  # compacted: the turn is tried again
                    s.finish(error_stop(exc), exc)
                    return
                except BaseException:
                    abandon(watch, "the run ended while its reply was streaming")
                    raise
                if reply is None:  # the run's deadline came first
                    abandon(watch, "the time limit ran out while its reply was streaming")
                    s.notes.append(f"turn {s.turns + 1}: the time limit ran out while "
                                   "waiting for the model's reply")
                    s.finish(RunStop.TIME_LIMIT)
                    return
                seconds = time.perf_counter() - started
                calls = reply.tool_calls
                if len(calls) != 1 and (why := unusable(reply, calls)) is not None:
                    # one call is always usable (`unusable`); a bad reply is not kept
                    abandon(watch, "its reply could not be used")
                    s.usage = s.usage + reply.usage
                    s.finish(RunStop.BAD_REPLY, WireFormatError(why))
                    return
                s.add_reply(reply, seconds)
                if not calls or (kept := warm(self.model, calls)) is None:
                    results, after = await answer(s, reply, calls, watch, self.dispatcher,
                                                  self.output.retries)
                else:
                    async with kept:
                        results, after = await answer(s, reply, calls, watch, self.dispatcher,
                                                      self.output.retries)
                if watch is not None and watch.early:
                    watch.abandon("the reply that was kept did not ask for its result")
                match after:
                    case RunStop() as stop:
                        s.finish(stop)
                        yield Step(turn=s.turns, request=request, reply=reply, results=results,
                                   stop=stop, usage=s.usage, seconds=seconds)
                        return
                    case Continue():
                        yield Step(turn=s.turns, request=request, reply=reply, results=results,
                                   stop=None, usage=s.usage, seconds=seconds)
        except (GeneratorExit, asyncio.CancelledError):
            s.notes.append("the run was closed or cancelled before it ended")
            s.finish(RunStop.STOPPED)
            raise
        except BaseException:  # a bug or a test double's complaint: the log stays resumable
            s.abort()
            raise

    def _limit_reached(self, s: RunState) -> Next:
        """Before each model call: the stop of a limit the run has reached, else `Continue`."""
        if s.stop_reason is not None:
            s.notes.append(s.stop_reason)
            return RunStop.STOPPED
        limits = self.limits
        if s.turns >= limits.max_turns:
            return RunStop.TURN_LIMIT
        if limits.token_budget is not None and s.usage.total_tokens >= limits.token_budget:
            return RunStop.TOKEN_BUDGET
        if limits.cost_budget is not None and (s.usage.cost or 0.0) >= limits.cost_budget:
            return RunStop.COST_BUDGET
        if limits.time_limit is not None and time.monotonic() - s.started >= limits.time_limit:
            return RunStop.TIME_LIMIT
        return _WITHIN_LIMITS

    async def _run_calls(self, s: RunState, calls: Sequence[ToolCallPart]
                         ) -> list[ToolResultPart]:
        """`toolwire.agent.answer.run_calls` with this agent's dispatcher (a resumed run's
        calls)."""
        return await run_calls(self.dispatcher, s, calls)

    def __repr__(self) -> str:
        return f"Agent(model={model_name(self.model)!r}, tools={[t.name for t in self.tools]})"


def _no_running_loop(name: str) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(
        f"Agent.{name}() cannot run inside a running event loop; use `await agent.a{name}(...)`"
    )


__all__ = ["Agent", "AgentRun", "RunResult", "RunStop", "Step", "Task"]
