"""An agent's settings, in four groups: `Limits` (when a run must end), `RequestSettings` (what
every model call asks for), `ToolPolicy` (how the model's calls are approved and run) and
`Output` (structured output).

Each is a frozen dataclass whose defaults are the agent's: ``Agent(model=m, limits=Limits(
max_turns=5))`` changes one limit and keeps the rest. The agent also takes each field as a
keyword of its own (``Agent(model=m, max_turns=5)``), a shorthand `settle` puts in its group
(`SHORTHAND` names them); a shorthand keyword and its group's object are not given together.
Must not import the loop, codecs, the transport or the client.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from toolwire.agent.dispatch import Approver, Policy
from toolwire.agent.run import OutputType
from toolwire.agent.toollist import ToolSource
from toolwire.transcript import Cache


@dataclass(frozen=True, kw_only=True, slots=True)
class Limits:
    """When a run must end, checked before each model call (each reached limit has its
    `toolwire.RunStop`)."""

    max_turns: int = 50
    """Model calls a run may make (stop ``turn_limit``)."""
    token_budget: int | None = None
    """Total tokens of the run's replies, input and output, summed (stop ``token_budget``)."""
    cost_budget: float | None = None
    """The run's summed `Usage.cost`, as the model reports it (stop ``cost_budget``)."""
    time_limit: float | None = None
    """Seconds of wall time; it also ends a model call or a tool still running when it runs
    out (stop ``time_limit``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestSettings:
    """What every model call of the agent asks for, and how it is made."""

    max_tokens: int | None = None
    """The most output tokens a reply may have (None: the wire's default)."""
    temperature: float | None = None
    """Sampling temperature (None: the provider's)."""
    reasoning: str | None = None
    """How much the model reasons first: ``low``, ``medium``, ``high`` or ``off``, as each
    wire asks for it (None: the provider's default)."""
    provider_options: Mapping[str, Any] | None = None
    """Fields sent as they are, by wire (see `toolwire.Request`)."""
    parallel_calls: bool | None = None
    """Whether the model may make several calls in one reply (None: the provider's default)."""
    cache: bool | Cache = True
    """Prompt caching on every request: True for the provider's default TTL and a cache key
    made from the agent's model, system prompt and tools; a `toolwire.Cache` for your own;
    False for no cache fields at all."""
    stream: bool = False
    """Use the model's ``stream`` when it has one: its events reach ``on_event`` as they come."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolPolicy:
    """How the model's tool calls are approved, run and shown to the model."""

    approval: Policy | Mapping[str, Policy] = "allow"
    """``allow``, ``ask``, ``deny`` or ``defer`` for every tool, or by tool name (``"*"`` for
    the rest). ``defer`` stops the run (``awaiting_approval``) until `Agent.resume` decides."""
    approve: Approver | None = None
    """Decides the calls whose policy is ``ask`` (None: they are refused)."""
    timeout: float | None = 300.0
    """Seconds a call may run, for tools that set no timeout of their own."""
    max_concurrency: int = 8
    """Calls of one reply that run at once."""
    max_output_chars: int = 50_000
    """Results longer than this are cut, saying so."""
    eager: bool = False
    """With ``stream``, start each call of a ``read_only`` tool as soon as its block closes in
    the stream (see `toolwire.agent.early`)."""
    deferred: Collection[str] = ()
    """Tools the model does not see at first: it finds them with ``search_tools``, and they
    join from the next turn on."""
    defer_after: int | None = None
    """Defer every tool past the first this many."""
    sources: Collection[ToolSource] = ()
    """Functions polled for tools to add before each model call (an MCP server's list)."""

    def __post_init__(self) -> None:  # kept as tuples, whatever collection was given
        object.__setattr__(self, "deferred", tuple(self.deferred))
        object.__setattr__(self, "sources", tuple(self.sources))


@dataclass(frozen=True, kw_only=True, slots=True)
class Output:
    """Structured output: the final tool whose arguments are a run's answer."""

    type: OutputType | None = None
    """The output every run asks for unless the run gives its own (``run(task, output=...)``):
    a Pydantic model class or a JSON Schema dict. None: runs answer in text."""
    tool: str = "final_answer"
    """The final tool's name."""
    retries: int = 2
    """Bad final answers sent back for another try before the run stops (``output_invalid``)."""
    can_force_tool: bool = True
    """False for a model that refuses a forced tool choice (Anthropic with extended thinking):
    the final tool is then asked for in the system prompt."""


class Shorthand(TypedDict, total=False):
    """The agent's keywords that stand for one field of a settings group (see `SHORTHAND`)."""

    max_turns: int
    token_budget: int | None
    cost_budget: float | None
    time_limit: float | None
    max_tokens: int | None
    temperature: float | None
    reasoning: str | None
    provider_options: Mapping[str, Any] | None
    parallel_calls: bool | None
    cache: bool | Cache
    stream: bool
    approval: Policy | Mapping[str, Policy]
    approve: Approver | None
    tool_timeout: float | None
    max_concurrency: int
    max_output_chars: int
    eager_tools: bool
    deferred: Iterable[str]
    defer_after: int | None
    tool_sources: Iterable[ToolSource]
    output_tool: str
    output_retries: int
    can_force_tool: bool


GROUPS: dict[str, type[Any]] = {
    "limits": Limits, "request": RequestSettings, "tool_policy": ToolPolicy, "output": Output,
}
"""The agent's keyword for each settings group, and the group's class."""

SHORTHAND: dict[str, tuple[str, str]] = {
    **{name: ("limits", name) for name in ("max_turns", "token_budget", "cost_budget",
                                           "time_limit")},
    **{name: ("request", name) for name in ("max_tokens", "temperature", "reasoning",
                                            "provider_options", "parallel_calls", "cache",
                                            "stream")},
    **{name: ("tool_policy", name) for name in ("approval", "approve", "max_concurrency",
                                                "max_output_chars", "deferred",
                                                "defer_after")},
    "tool_timeout": ("tool_policy", "timeout"),
    "eager_tools": ("tool_policy", "eager"),
    "tool_sources": ("tool_policy", "sources"),
    "output_tool": ("output", "tool"),
    "output_retries": ("output", "retries"),
    "can_force_tool": ("output", "can_force_tool"),
}
"""Each shorthand keyword of the agent: its group's keyword and the field it sets."""


def settle(
    groups: Mapping[str, Any], shorthand: Mapping[str, Any]
) -> tuple[Limits, RequestSettings, ToolPolicy, Output]:
    """The agent's four settings groups from the objects given (``groups``, by keyword, None
    where not given) and the shorthand keywords; a `TypeError` for a keyword the agent does not
    take, an object of the wrong class, or a shorthand keyword given with its group's object."""
    changes: dict[str, dict[str, Any]] = {name: {} for name in GROUPS}
    for name, value in groups.items():
        kind = GROUPS[name]
        if value is not None and not isinstance(value, kind):
            hint = (f"; for structured output write output=toolwire.Output(type={value!r})"
                    if name == "output" else "")
            raise TypeError(f"Agent({name}=...) takes a toolwire.{kind.__name__}, not "
                            f"{type(value).__name__}{hint}")
    for key, value in shorthand.items():
        if key not in SHORTHAND:
            raise TypeError(f"Agent() got an unexpected keyword argument {key!r}")
        group, field = SHORTHAND[key]
        if groups.get(group) is not None:
            raise TypeError(
                f"Agent({key}=...) is shorthand for {group}=toolwire.{GROUPS[group].__name__}("
                f"{field}=...), and {group}= is given too: set {field} in it")
        changes[group][field] = value
    made = {name: groups.get(name) or GROUPS[name](**changes[name]) for name in GROUPS}
    return made["limits"], made["request"], made["tool_policy"], made["output"]


__all__ = ["GROUPS", "SHORTHAND", "Limits", "Output", "RequestSettings", "Shorthand",
           "ToolPolicy", "settle"]
