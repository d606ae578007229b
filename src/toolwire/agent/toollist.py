"""The tools one run shows the model, and how that list grows between turns.

Owns `ToolList` (per run), `ToolSearch` (the harness's own ``search_tools`` tool over an agent's
deferred tools) and `split_deferred` (which of an agent's tools are loaded from the start).

A run starts with the loaded tools. Two things can add tools while it goes: a ``search_tools``
call (the tools it found) and a tool source (a callable polled before each model call, such as
an MCP server whose tool list changed). Added tools go in a system message at the place in the
conversation where they were added (`ToolList.messages`): the canonical tools-added message,
which a wire that adds tools mid-conversation sends there (Anthropic's ``tool_addition``, the
Responses API's ``additional_tools``), so the tool list and the conversation before it, and the
provider's prompt cache over them, stay as they were. Every other wire offers them after every
tool the run already shows, so the request's bytes before them stay the same and the cache holds
up to them; each growth is a note, since what follows there is cached anew once. What a search
found is worked out again from the call's query (the search is deterministic), so a resumed run
grows the same way from its history.

Must not import the loop, the run's values or the run log (it sits at the bottom of `agent`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import msgspec

from toolwire.schema.search import ToolIndex
from toolwire.schema.tool import Tool
from toolwire.transcript import Message, ToolCallPart, ToolResultPart, ToolSpec

SEARCH_TOOL = "search_tools"
"""The name of the harness's tool search tool."""

ToolSource = Callable[[], Iterable[Tool]]
"""Polled before each model call: the tools it gives that the run does not show yet join it."""


def split_deferred(
    tools: Sequence[Tool], deferred: Iterable[str] = (), defer_after: int | None = None
) -> tuple[tuple[Tool, ...], tuple[Tool, ...]]:
    """``tools`` as (loaded, deferred): the tools named in ``deferred``, and every tool past
    the first ``defer_after`` of the others, are deferred. A name that is not a tool is an
    error naming it."""
    names = set(deferred)
    unknown = sorted(names - {t.name for t in tools})
    if unknown:
        raise ValueError(f"deferred names no tool: {', '.join(unknown)}; give tool names")
    if defer_after is not None and defer_after < 0:
        raise ValueError(f"defer_after is {defer_after}; give 0 or more")
    loaded: list[Tool] = []
    later: list[Tool] = []
    for tool in tools:
        keep = tool.name not in names and (defer_after is None or len(loaded) < defer_after)
        (loaded if keep else later).append(tool)
    return tuple(loaded), tuple(later)


def defer_tools(
    tools: Sequence[Tool], deferred: Iterable[str] = (), defer_after: int | None = None,
    *, native: bool = False,
) -> tuple[tuple[Tool, ...], tuple[ToolSpec, ...], ToolSearch | None]:
    """The tools a run can call, the specs its requests start with, and the harness's search
    over the deferred tools (None when there are none, or when the provider searches itself:
    ``native``, where the deferred tools go in every request marked `ToolSpec.deferred`)."""
    loaded, later = split_deferred(tools, deferred, defer_after)
    specs = tuple(t.spec for t in loaded)
    if not later:
        return loaded, specs, None
    if native:
        marked = tuple(msgspec.structs.replace(t.spec, deferred=True) for t in later)
        return (*loaded, *later), (*specs, *marked), None
    search = ToolSearch(later)
    return (*loaded, search.tool), (*specs, search.tool.spec), search


class ToolSearch:
    """The ``search_tools`` tool over ``deferred`` tools: BM25 over their names, descriptions
    and parameters (`toolwire.schema.search.ToolIndex`); each call gives at most ``limit``."""

    def __init__(self, deferred: Sequence[Tool], *, limit: int = 5) -> None:
        if SEARCH_TOOL in {t.name for t in deferred}:
            raise ValueError(f"a tool named {SEARCH_TOOL!r} cannot be deferred: the harness "
                             "uses that name for its own tool search")
        self.deferred: dict[str, Tool] = {t.name: t for t in deferred}
        self.index = ToolIndex(t.spec for t in deferred)
        self.limit = limit
        self.tool = Tool(
            name=SEARCH_TOOL, read_only=True, idempotent=True, fn=self._answer,
            description=(
                f"Find tools by what they do. {len(self.deferred)} more tools exist than the "
                "ones you see; describe the action you need in a few words and the best "
                "matches join your tools from your next turn on."),
            input_schema={"type": "object", "properties": {
                "query": {"type": "string",
                          "description": "What the tool should do, in a few words"}},
                "required": ["query"]},
        )

    def found(self, query: str) -> list[ToolSpec]:
        return self.index.search(query, self.limit)

    def _answer(self, query: str) -> str:
        specs = self.found(query)
        if not specs:
            return (f"No tool matches {query!r}. Try other words: the action and the thing "
                    "it acts on.")
        lines = [f"Found {len(specs)} tools; call them from your next turn on:"]
        for spec in specs:
            params = ", ".join(spec.input_schema.get("properties", {}) or {})  # type: ignore[arg-type]
            lines.append(f"- {spec.name}({params}): {spec.description}")
        return "\n".join(lines)


class ToolList:
    """The tools one run shows, after the fixed ones of its first request: only ever grows."""

    def __init__(self, search: ToolSearch | None = None,
                 sources: Sequence[ToolSource] = (),
                 on_new_tools: Callable[[Sequence[Tool]], None] | None = None) -> None:
        self.search = search
        self.sources = tuple(sources)
        self.on_new_tools = on_new_tools
        self.added: list[ToolSpec] = []
        self.places: list[tuple[int, tuple[ToolSpec, ...]]] = []
        """Where each growth happened: the number of messages before it, and its tools."""
        self.searches: list[tuple[str, tuple[str, ...]]] = []
        """Each search made: its query and the names it found, in order."""
        self._shown: set[str] = set()

    def tools(self, base: Sequence[ToolSpec]) -> tuple[ToolSpec, ...]:
        """The request's tools: ``base`` (the run's fixed tools), then those added, in order."""
        if not self.added:
            return tuple(base)
        return (*base, *self.added)

    def messages(self, history: Sequence[Message]) -> tuple[Message, ...]:
        """The conversation to send: ``history`` with a system message adding the tools of
        each growth at the place it happened."""
        if not self.places:
            return tuple(history)
        out: list[Message] = []
        places = iter(self.places)
        place = next(places, None)
        for n in range(len(history) + 1):
            while place is not None and place[0] == n:
                out.append(Message(role="system", tools=place[1]))
                place = next(places, None)
            if n < len(history):
                out.append(history[n])
        return tuple(out)

    def grow(self, base: Sequence[ToolSpec], specs: Iterable[ToolSpec],
             at: int | None = None) -> list[ToolSpec]:
        """Append the ``specs`` the run does not show yet, added after the first ``at``
        messages (None: not placed); return them."""
        shown = self._shown | {s.name for s in base}
        new = []
        for spec in specs:
            if spec.name not in shown:
                shown.add(spec.name)
                new.append(spec)
        self.added.extend(new)
        self._shown |= {s.name for s in new}
        if new and at is not None:
            self.places.append((at, tuple(new)))
        return new

    def poll(self, base: Sequence[ToolSpec], turn: int, at: int | None = None) -> list[str]:
        """Ask each source for its tools; the new ones join the list (added after the first
        ``at`` messages). Notes saying so."""
        notes = []
        for source in self.sources:
            tools = list(source())
            new = self.grow(base, (t.spec for t in tools), at)
            if new:
                names = {s.name for s in new}
                if self.on_new_tools is not None:
                    self.on_new_tools([t for t in tools if t.name in names])
                notes.append(_growth_note(turn, "a tool source added", [s.name for s in new]))
        return notes

    def answered(self, base: Sequence[ToolSpec], reply: Message | None, results: Message,
                 turn: int, at: int | None = None) -> list[str]:
        """After the results of ``reply``'s calls (the first ``at`` messages end with them):
        what each search call found joins the list. Notes saying what was searched and found."""
        if self.search is None or reply is None or results.role != "tool":
            return []
        ok = {p.call_id for p in results.parts
              if isinstance(p, ToolResultPart) and not p.is_error}
        notes = []
        for part in reply.parts:
            if not (isinstance(part, ToolCallPart) and part.name == SEARCH_TOOL
                    and part.id in ok):
                continue
            query = _query(part.arguments)
            found = self.search.found(query)
            self.searches.append((query, tuple(s.name for s in found)))
            new = self.grow(base, found, at)
            if new:
                notes.append(_growth_note(turn, f"search_tools({query!r}) found",
                                          [s.name for s in new]))
        return notes

    def replay(self, base: Sequence[ToolSpec], messages: Sequence[Message]) -> None:
        """Grow as the run in ``messages`` grew (a resumed run goes on with its tools)."""
        for n, (before, message) in enumerate(itertools.pairwise(messages)):
            self.answered(base, before, message, 0, n + 2)


def _query(arguments: Mapping[str, Any]) -> str:
    query = arguments.get("query")
    return query if isinstance(query, str) else ""


def _growth_note(turn: int, what: str, names: Sequence[str]) -> str:
    return (f"turn {turn}: {what} {', '.join(names)}; they are added at this point of the "
            "conversation where the wire can (elsewhere after the tools already shown), so the "
            "prompt cache holds up to them")


__all__ = ["SEARCH_TOOL", "ToolList", "ToolSearch", "ToolSource", "defer_tools", "split_deferred"]
