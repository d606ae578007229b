"""Starting a run and resuming one from its run log.

Owns `RunSetup` (what a run needs to know of its agent), `start_state` and `resume_state`. Both
build a `RunState` whose listeners are the run log (when there is one), the run's telemetry
(`toolwire.telemetry.spans.RunTelemetry`, imported only when the agent's runs are traced) and
the agent's ``on_event``; resuming also rebuilds the history from the log and answers the calls
it left waiting. Running calls comes in as a function (`toolwire.agent.output.RunCalls`), so
this module never sees the `Agent` itself. Must not import the loop, codecs, the transport or
the client.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from toolwire.agent.compaction import Keeper
from toolwire.agent.dispatch import Dispatcher
from toolwire.agent.output import OutputTool, RunCalls, answer_calls, make_output
from toolwire.agent.run import Continue, Next, OutputType, RunState, RunStop
from toolwire.agent.runlog import RunLog, read_log
from toolwire.agent.settings import Output, RequestSettings
from toolwire.agent.toollist import ToolList
from toolwire.events import Listener, RunResumed
from toolwire.protocol import model_name, provider_model
from toolwire.telemetry.settings import Telemetry, for_agent
from toolwire.transcript import (
    Cache,
    Message,
    Request,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
)

if TYPE_CHECKING:
    from toolwire.telemetry.spans import RunTelemetry


class RunSetup(Protocol):
    """The settings of an agent that starting or resuming a run reads (`toolwire.Agent` has
    them all)."""

    @property
    def model(self) -> object: ...
    @property
    def system(self) -> str | None: ...
    @property
    def specs(self) -> tuple[ToolSpec, ...]: ...
    def run_tools(self) -> ToolList | None: ...
    @property
    def dispatcher(self) -> Dispatcher: ...
    @property
    def request(self) -> RequestSettings: ...
    @property
    def output(self) -> Output: ...
    @property
    def settings(self) -> dict[str, Any]: ...
    @property
    def context(self) -> dict[str, Any]: ...
    @property
    def on_event(self) -> Callable[[object], None] | None: ...
    @property
    def instrument(self) -> bool | Telemetry | None: ...
    @property
    def cache(self) -> Cache | None: ...
    @property
    def keeper(self) -> Keeper: ...


def _output(setup: RunSetup, output: OutputType | None) -> OutputTool | None:
    if output is None:
        return None
    return make_output(output, setup.output.tool, setup.dispatcher.tools)


def _base_request(setup: RunSetup, out: OutputTool | None, notes: list[str]) -> Request:
    system, asked = setup.system, setup.request
    parallel = asked.parallel_calls
    choice = None if parallel is None else ToolChoice(parallel=parallel)
    specs = setup.specs
    if out is not None:
        specs = (*specs, out.tool.spec)
        if setup.output.can_force_tool:
            if setup.specs:
                choice = ToolChoice(mode="required", parallel=parallel)
            else:
                choice = ToolChoice(mode="tool", name=out.name, parallel=parallel)
        else:
            ask = f"When you have the answer, give it by calling the {out.name!r} tool."
            system = f"{system}\n\n{ask}" if system else ask
            notes.append(
                f"the model cannot be forced to call a tool, so {out.name!r} is asked for with "
                "tool choice auto and a line in the system prompt"
            )
    return Request(
        model=provider_model(setup.model), system=system, tools=specs, tool_choice=choice,
        max_tokens=asked.max_tokens, temperature=asked.temperature,
        provider_options=asked.provider_options, cache=setup.cache,
        context_management=setup.keeper.managed, reasoning=asked.reasoning,
    )


def _telemetry(setup: RunSetup, base: Request, resumed: bool) -> RunTelemetry | None:
    """The run's `toolwire.telemetry.spans.RunTelemetry` when its agent's runs are traced."""
    settings = for_agent(setup.instrument)
    if settings is None:
        return None
    from toolwire.telemetry.spans import RunTelemetry

    return RunTelemetry(settings, model=setup.model, request=base, tools=setup.dispatcher.tools,
                        stream=setup.request.stream and hasattr(setup.model, "stream"),
                        resumed=resumed)


def _listeners(setup: RunSetup, log: RunLog | None, traced: RunTelemetry | None
               ) -> tuple[Listener, ...]:
    """The run log first (it keeps what happened even when a callback fails), then the
    telemetry, then on_event."""
    found: list[Listener] = []
    if log is not None:  # it paces progress itself: a line a second for a flood of reports
        found.append(log)
    if traced is not None:
        found.append(traced)
    if setup.on_event is not None:
        found.append(setup.on_event)
    return tuple(found)


def _closer(log: RunLog | None, traced: RunTelemetry | None) -> Callable[[], None] | None:
    """What a run that breaks off without a stop closes: its log and its spans."""
    if traced is None:
        return log.close if log is not None else None

    def close() -> None:
        traced.close()
        if log is not None:
            log.close()

    return close


def start_state(
    setup: RunSetup,
    messages: Sequence[Message],
    output: OutputType | None,
    log: str | os.PathLike[str] | None,
) -> RunState:
    """A new run on ``messages``, logged to ``log`` (a new or empty file) when given."""
    notes: list[str] = []
    out = _output(setup, output)
    base = _base_request(setup, out, notes)
    runlog = None
    if log is not None:
        path = log if isinstance(log, Path) else Path(log)  # a Path is not parsed again
        try:
            held = os.stat(path).st_size
        except OSError as exc:  # none there yet, as `Path.exists` would say; others raise
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP):
                raise
            held = 0
        if held > 0:
            raise FileExistsError(
                f"run log {path} already holds a run; continue it with Agent.resume({str(path)!r})"
                " or log this run to a new path"
            )
        runlog = RunLog(path)
        runlog.header(model=model_name(setup.model), request_model=base.model,
                      system=base.system, tools=setup.specs,
                      output=out.tool.spec if out else None, settings=setup.settings,
                      context=setup.context)
    traced = _telemetry(setup, base, resumed=False)
    state = RunState(messages=[], request_base=base, output=out, notes=notes,
                     listeners=_listeners(setup, runlog, traced), close=_closer(runlog, traced),
                     tool_list=setup.run_tools())
    for message in messages:
        state.add(message)
    return state


def _interrupted(call: ToolCallPart) -> ToolResultPart:
    return ToolResultPart(
        call_id=call.id, name=call.name, is_error=True,
        content="The run was interrupted while this call was running, so its result is unknown. "
        "The tool may or may not have done its work; check before calling it again.",
    )


async def resume_state(
    setup: RunSetup, log: str | os.PathLike[str], output: OutputType | None, run_calls: RunCalls,
    more: Sequence[Message] = (),
) -> RunState:
    """The state of the run in ``log``, with every call answered, ready to go on; ``more``
    (the user's next message) is added after the history, and the run goes on from it even
    when it had ended with an answer.

    Calls that finished keep their logged results; calls that never started are run now (with
    ``run_calls``); calls cut off mid-run are run again when their tool is idempotent, and
    otherwise answered with an error result saying the run was interrupted. Logs of every
    format `toolwire.agent.runlog.read_log` reads can be resumed; what is added is written in
    today's format.
    """
    logged = read_log(log)
    saved_output = logged.header.get("output")
    if output is None and isinstance(saved_output, Mapping):
        output = saved_output.get("input_schema")
    notes = [f"resumed from {logged.path} after {logged.turns} turns"]
    if logged.torn:
        notes.append("the log's last line was cut off by the crash and was dropped")
    out = _output(setup, output)
    base = _base_request(setup, out, notes)
    logged_tools = [t.get("name") for t in logged.header.get("tools", [])]
    if logged_tools != [s.name for s in setup.specs]:
        notes.append(f"the run was logged with tools {logged_tools}; it goes on with "
                     f"{[s.name for s in setup.specs]}")
    if logged.header.get("system") != base.system:
        notes.append("the system prompt differs from the one the run was logged with")
    runlog = RunLog(log, repair=True)
    traced = _telemetry(setup, base, resumed=True)
    state = RunState(messages=list(logged.messages), request_base=base, output=out,
                     listeners=_listeners(setup, runlog, traced), close=_closer(runlog, traced),
                     turns=logged.turns, usage=logged.usage, notes=notes,
                     tool_list=setup.run_tools())
    if state.tool_list is not None:
        state.tool_list.replay(base.tools, state.messages)
    state.emit(RunResumed(len(logged.messages), logged.turns))
    pending = logged.pending
    if not pending:
        setup.dispatcher.bind(())
        last = state.messages[-1] if state.messages else None
        for message in more:
            state.add(message)
        if last is not None and last.role == "assistant" and not more:
            state.finish(RunStop(logged.stop) if logged.stop else RunStop.ANSWERED)
        return state
    results: list[ToolResultPart | None] = [None] * len(pending)
    rerun: list[int] = []
    for i, call in enumerate(pending):
        tool = setup.dispatcher.tools.get(call.name)
        if call.id in logged.results:
            results[i] = logged.results[call.id]
        elif call.id in logged.started and not (tool is not None and tool.idempotent):
            results[i] = _interrupted(call)
        else:
            rerun.append(i)
    notes.append(
        f"{len(pending)} calls were waiting for results: {len(pending) - len(rerun)} answered "
        f"from the log or marked interrupted, {len(rerun)} run now"
    )
    after: Next = Continue("the waiting calls were answered from the log")
    calls = [pending[i] for i in rerun]
    setup.dispatcher.bind(calls)  # each decision answers the exact call it was given for, once
    if rerun:
        ran, after = await answer_calls(state, calls, run_calls, setup.output.retries)
        for i, result in zip(rerun, ran, strict=True):
            results[i] = result
    state.add(Message(role="tool", parts=tuple(r for r in results if r is not None)))
    match after:
        case RunStop() as stop:
            state.finish(stop)
        case Continue():
            for message in more:
                state.add(message)
    return state


__all__ = ["RunSetup", "resume_state", "start_state"]
