"""Structured output: the final tool whose arguments are the run's answer.

Owns `OutputTool`, `make_output`, `answer_calls` (the results of a reply's calls when one of them
may be the final answer) and `nudge_for_output` (the model answered in text: ask again). What
running the other calls takes comes in as a function, so this module never sees the `Agent`.
Must not import the loop, codecs, the transport or the client.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from toolwire.agent.run import Continue, Next, OutputType, RunState, RunStop
from toolwire.errors import ToolCallError, ToolDefinitionError
from toolwire.schema.tool import Tool
from toolwire.transcript import Message, ToolCallPart, ToolResultPart

OUTPUT_DESCRIPTION = (
    "Give your final answer by calling this tool once you are done: its arguments are the "
    "answer. Calling it ends your work."
)

RunCalls = Callable[[RunState, Sequence[ToolCallPart]], Awaitable[list[ToolResultPart]]]
"""Runs tool calls for a run and gives one result per call, in call order."""


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


def make_output(output: OutputType, name: str, taken: Collection[str]) -> OutputTool:
    """The output tool named ``name`` for ``output``; ``taken`` are the run's tool names."""
    if name in taken:
        raise ToolDefinitionError(
            f"a tool is already named {name!r}, the structured-output tool's name; pass "
            "Agent(output=toolwire.Output(tool=...)), or output_tool=..., to use another name"
        )
    if isinstance(output, type) and issubclass(output, BaseModel):
        doc = (output.__doc__ or "").strip()
        description = f"{OUTPUT_DESCRIPTION} {doc}" if doc else OUTPUT_DESCRIPTION
        return OutputTool(Tool.from_model(output, name=name, description=description), output)
    if isinstance(output, Mapping):
        return OutputTool(Tool(name=name, description=OUTPUT_DESCRIPTION, input_schema=output),
                          None)
    raise TypeError(f"output must be a Pydantic model class or a JSON Schema dict, got {output!r}")


def _not_run(call: ToolCallPart) -> ToolResultPart:
    return ToolResultPart(
        call_id=call.id, name=call.name, is_error=True,
        content="Not run: the final answer came in the same reply, which ended the run.",
    )


ANSWERED = Continue("its calls were answered")
"""What comes after a reply whose calls were all answered and none was the final answer."""


async def answer_calls(
    s: RunState, calls: Sequence[ToolCallPart], run_calls: RunCalls, retries: int
) -> tuple[list[ToolResultPart], Next]:
    """One result per call, in call order, and what comes next: the stop a valid final answer
    (or the last bad one) brings, else `Continue`.

    ``run_calls`` runs the calls that are not the final answer; after ``retries`` bad answers
    the run stops with `RunStop.OUTPUT_INVALID`.
    """
    out = s.output
    if out is None:  # no structured output: no call is the final answer
        return list(await run_calls(s, calls)), ANSWERED
    finals = [i for i, c in enumerate(calls) if c.name == out.name]
    if not finals:
        return list(await run_calls(s, calls)), ANSWERED
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
    ran = iter(await run_calls(s, others) if others else [])
    s.output_failures += 1
    results = [
        ToolResultPart(call_id=c.id, name=c.name, is_error=True, content=problems[i])
        if i in problems else next(ran)
        for i, c in enumerate(calls)
    ]
    if s.output_failures > retries:
        s.notes.append(f"the final answer was still invalid after {retries} retries")
        return results, RunStop.OUTPUT_INVALID
    return results, Continue("the model was told what was wrong with its final answer")


def nudge_for_output(s: RunState, retries: int) -> Next:
    """The model answered in text but an output tool call is wanted: ask again, at most
    ``retries`` times."""
    assert s.output is not None
    s.output_failures += 1
    if s.output_failures > retries:
        s.notes.append(f"the model answered in text instead of calling {s.output.name!r}, "
                       f"{s.output_failures} times")
        return RunStop.OUTPUT_INVALID
    s.add(Message.user(
        f"Give your final answer by calling the {s.output.name!r} tool: its arguments are the "
        "answer."
    ))
    return Continue("the model was asked again to call the output tool")


__all__ = ["ANSWERED", "OUTPUT_DESCRIPTION", "OutputTool", "RunCalls", "answer_calls",
           "make_output", "nudge_for_output"]
