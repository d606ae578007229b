"""The parts of the agent loop that are not the loop: starting a run, structured output, resuming.

Owns `OutputTool` (the forced final tool whose arguments are the answer), `start_state`,
`resume_state`, `answer_calls` and `nudge_for_output`. Used only by `toolwire.agent.loop`; must not
import codecs, the transport or the client.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from toolwire.agent.run import OutputType, RunState, RunStop
from toolwire.agent.runlog import RunLog, read_log
from toolwire.errors import ToolCallError, ToolDefinitionError
from toolwire.protocol import model_name
from toolwire.schema.tool import Tool
from toolwire.transcript import Message, Request, ToolCallPart, ToolChoice, ToolResultPart

if TYPE_CHECKING:
    from toolwire.agent.loop import Agent

OUTPUT_DESCRIPTION = (
    "Give your final answer by calling this tool once you are done: its arguments are the "
    "answer. Calling it ends your work."
)


@dataclass(frozen=True, slots=True)
class OutputTool:
    """The structured-output tool of a run and how to turn its arguments into the output."""

    tool: Tool
    model: type[BaseModel] | None

    @property
    def name(self) -> str:
        return self.tool.name

    def parse(self, call: ToolCallPart) -> Any:
        """The output a call gives; raises `ToolCallError` with text for the model."""
        arguments = self.tool.validate(call.wire_arguments)
        if self.model is None:
            return arguments
        args, _ = self.tool.bind(arguments)
        return args[0]


def make_output(agent: Agent, output: OutputType) -> OutputTool:
    name = agent.output_tool
    if name in agent.dispatcher.tools:
        raise ToolDefinitionError(
            f"a tool is already named {name!r}, the structured-output tool's name; pass "
            "Agent(output_tool=...) to use another name"
        )
    if isinstance(output, type) and issubclass(output, BaseModel):
        doc = (output.__doc__ or "").strip()
        description = f"{OUTPUT_DESCRIPTION} {doc}" if doc else OUTPUT_DESCRIPTION
        return OutputTool(Tool.from_model(output, name=name, description=description), output)
    if isinstance(output, Mapping):
        return OutputTool(Tool(name=name, description=OUTPUT_DESCRIPTION, input_schema=output),
                          None)
    raise TypeError(f"output must be a Pydantic model class or a JSON Schema dict, got {output!r}")


def _base_request(
    agent: Agent, out: OutputTool | None, notes: list[str]
) -> Request:
    system = agent.system
    choice = None if agent.parallel_calls is None else ToolChoice(parallel=agent.parallel_calls)
    specs = agent.specs
    if out is not None:
        specs = (*specs, out.tool.spec)
        if agent.can_force_tool:
            if agent.specs:
                choice = ToolChoice(mode="required", parallel=agent.parallel_calls)
            else:
                choice = ToolChoice(mode="tool", name=out.name, parallel=agent.parallel_calls)
        else:
            ask = f"When you have the answer, give it by calling the {out.name!r} tool."
            system = f"{system}\n\n{ask}" if system else ask
            notes.append(
                f"the model cannot be forced to call a tool, so {out.name!r} is asked for with "
                "tool choice auto and a line in the system prompt"
            )
    return Request(
        model=model_name(agent.model), system=system, tools=specs, tool_choice=choice,
        max_tokens=agent.max_tokens, temperature=agent.temperature,
        provider_options=agent.provider_options,
    )


def _settings(agent: Agent) -> dict[str, Any]:
    return {
        "max_turns": agent.max_turns, "token_budget": agent.token_budget,
        "cost_budget": agent.cost_budget, "time_limit": agent.time_limit,
        "can_force_tool": agent.can_force_tool,
    }


def start_state(
    agent: Agent,
    messages: Sequence[Message],
    output: OutputType | None,
    log: str | os.PathLike[str] | None,
) -> RunState:
    notes: list[str] = []
    out = make_output(agent, output) if output is not None else None
    base = _base_request(agent, out, notes)
    runlog = None
    if log is not None:
        path = Path(log)
        if path.exists() and path.stat().st_size > 0:
            raise FileExistsError(
                f"run log {path} already holds a run; continue it with Agent.resume({str(path)!r})"
                " or log this run to a new path"
            )
        runlog = RunLog(path)
        runlog.header(model=base.model, system=base.system, tools=agent.specs,
                      output=out.tool.spec if out else None, settings=_settings(agent))
    state = RunState(messages=[], request_base=base, output=out, log=runlog, notes=notes)
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
    agent: Agent, log: str | os.PathLike[str], output: OutputType | None
) -> RunState:
    """The state of the run in ``log``, with every call answered, ready to go on.

    Calls that finished keep their logged results; calls that never started are run now;
    calls cut off mid-run are run again when their tool is idempotent, and otherwise answered
    with an error result saying the run was interrupted.
    """
    logged = read_log(log)
    saved_output = logged.header.get("output")
    if output is None and isinstance(saved_output, Mapping):
        output = saved_output.get("input_schema")
    notes = [f"resumed from {logged.path} after {logged.turns} turns"]
    if logged.torn:
        notes.append("the log's last line was cut off by the crash and was dropped")
    out = make_output(agent, output) if output is not None else None
    base = _base_request(agent, out, notes)
    logged_tools = [t.get("name") for t in logged.header.get("tools", [])]
    if logged_tools != [s.name for s in agent.specs]:
        notes.append(f"the run was logged with tools {logged_tools}; it goes on with "
                     f"{[s.name for s in agent.specs]}")
    if logged.header.get("system") != base.system:
        notes.append("the system prompt differs from the one the run was logged with")
    runlog = RunLog(log, repair=True)
    runlog.write("resume", messages=len(logged.messages), turns=logged.turns)
    state = RunState(messages=list(logged.messages), request_base=base, output=out, log=runlog,
                   turns=logged.turns, usage=logged.usage, notes=notes)
    pending = logged.pending
    if not pending:
        last = state.messages[-1] if state.messages else None
        if last is not None and last.role == "assistant":
            state.finish(RunStop(logged.stop) if logged.stop else RunStop.ANSWERED)
        return state
    results: list[ToolResultPart | None] = [None] * len(pending)
    rerun: list[int] = []
    for i, call in enumerate(pending):
        tool = agent.dispatcher.tools.get(call.name)
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
    stop = None
    if rerun:
        ran, stop = await answer_calls(agent, state, [pending[i] for i in rerun])
        for i, result in zip(rerun, ran, strict=True):
            results[i] = result
    state.add(Message(role="tool", parts=tuple(r for r in results if r is not None)))
    if stop is not None:
        state.finish(stop)
    return state


def _not_run(call: ToolCallPart) -> ToolResultPart:
    return ToolResultPart(
        call_id=call.id, name=call.name, is_error=True,
        content="Not run: the final answer came in the same reply, which ended the run.",
    )


async def answer_calls(
    agent: Agent, s: RunState, calls: Sequence[ToolCallPart]
) -> tuple[list[ToolResultPart], RunStop | None]:
    """One result per call, in call order, and the stop a valid final answer brings."""
    out = s.output
    finals = [i for i, c in enumerate(calls) if out is not None and c.name == out.name]
    if out is None or not finals:
        return list(await agent._run_calls(s, calls)), None
    problems: dict[int, str] = {}
    for i in finals:
        try:
            value = out.parse(calls[i])
        except ToolCallError as exc:
            problems[i] = str(exc)
            continue
        s.output_value = value
        accepted = ToolResultPart(call_id=calls[i].id, name=out.name, content="Answer accepted.")
        return [accepted if j == i else _not_run(c) for j, c in enumerate(calls)], RunStop.ANSWERED
    others = [c for i, c in enumerate(calls) if i not in problems]
    ran = iter(await agent._run_calls(s, others) if others else [])
    s.output_failures += 1
    results = [
        ToolResultPart(call_id=c.id, name=c.name, is_error=True, content=problems[i])
        if i in problems else next(ran)
        for i, c in enumerate(calls)
    ]
    if s.output_failures > agent.output_retries:
        s.notes.append(f"the final answer was still invalid after {agent.output_retries} retries")
        return results, RunStop.OUTPUT_INVALID
    return results, None


def nudge_for_output(agent: Agent, s: RunState) -> RunStop | None:
    """The model answered in text but an output tool call is wanted: ask again, a bounded number
    of times."""
    assert s.output is not None
    s.output_failures += 1
    if s.output_failures > agent.output_retries:
        s.notes.append(f"the model answered in text instead of calling {s.output.name!r}, "
                       f"{s.output_failures} times")
        return RunStop.OUTPUT_INVALID
    s.add(Message.user(
        f"Give your final answer by calling the {s.output.name!r} tool: its arguments are the "
        "answer."
    ))
    return None
