"""A request's tool names and call ids as a wire with strict rules for them takes them.

Owns `request_names` (the whole `NameMap` of a request: its tools first, then the names only
seen in its history or its tool choice), `ToolNames` (that map built only once a name that
needs it turns up) and `IdRewriter` (call ids the provider would refuse rewritten the same way
for calls and results, each noted once). A wire gives its own name rule, id rule and rewrite
of an id; this module never names a wire.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from toolwire.codecs.base import NameMap, Note
from toolwire.transcript import Request, ToolCallPart


def request_names(request: Request | None, *, pattern: re.Pattern[str],
                  max_len: int) -> NameMap:
    """The tool-name mapping for a request: its tools first, then names only seen in history
    (calls, then the tool choice)."""
    if request is None:
        return NameMap()
    names = [t.name for t in request.tools]
    seen = set(names)
    extra = [p.name for m in request.messages for p in m.parts if isinstance(p, ToolCallPart)]
    if request.tool_choice is not None and request.tool_choice.name:
        extra.append(request.tool_choice.name)
    for name in extra:
        if name not in seen:
            names.append(name)
            seen.add(name)
    return NameMap.build(names, pattern=pattern, max_len=max_len)


_MATCHED: dict[re.Pattern[str], set[str]] = {}
_MATCHED_MOST = 4096


def matched(pattern: re.Pattern[str]) -> set[str]:
    """Strings seen to match ``pattern``, remembered for the whole process (`remember`): the
    same ids and names come back on every turn of a conversation, and looking one up in a set
    costs a small part of a match."""
    return _MATCHED.setdefault(pattern, set())


def remember(known: set[str], text: str) -> None:
    """Adds ``text`` (seen to match) to ``known`` (a `matched` set), which is emptied first
    once it holds `_MATCHED_MOST` strings."""
    if len(known) >= _MATCHED_MOST:
        known.clear()
    known.add(text)


class ToolNames:
    """`request_names` of a request, built only once a name that needs mapping turns up.

    A name that fits the wire's rule is never mapped, and no user's name is ever chosen as the
    wire name of another (wire names are picked among names no tool has, and all fit), so
    while every name seen fits, or is one of the tools, there is nothing to build: no scan of
    the history. ``fit`` holds names already seen to fit, which are sent as they are even once
    the mapping is built: a hot loop may send a name found there, and ask `wire` for any other.
    """

    PATTERN: ClassVar[re.Pattern[str]]
    """The wire's rule for a name (a subclass's own, with `MAX_LEN`, its longest name)."""
    MAX_LEN: ClassVar[int]
    KNOWN: ClassVar[set[str]]
    """The names seen to fit `PATTERN` (`matched`), set for each subclass."""

    __slots__ = ("_map", "_request", "_tools", "fit")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.KNOWN = matched(cls.PATTERN)

    def __init__(self, request: Request | None) -> None:
        self._request = request
        self._map: NameMap | None = None if request is not None else NameMap()
        self._tools: set[str] | None = None
        self.fit: set[str] = set()

    @property
    def built(self) -> bool:
        """Whether a name needed the whole mapping (only then can there be notes)."""
        return self._map is not None and self._request is not None

    def full(self) -> NameMap:
        if self._map is None:
            self._map = request_names(self._request, pattern=self.PATTERN,
                                      max_len=self.MAX_LEN)
        return self._map

    def wire(self, name: str) -> str:
        if self._map is None:
            if name in self.fit:
                return name
            if name in self.KNOWN:
                self.fit.add(name)
                return name
            if self.PATTERN.match(name):
                self.fit.add(name)
                remember(self.KNOWN, name)
                return name
        return self.full().wire(name)

    def user(self, name: str) -> str:
        if self._map is None:
            tools = self._tools
            if tools is None:
                assert self._request is not None
                tools = self._tools = {t.name for t in self._request.tools}
            if name in tools:  # a user's name is never the wire name of another
                return name
        return self.full().user(name)

    def notes(self) -> list[Note]:
        return self.full().notes() if self.built else []


class IdRewriter:
    """Rewrites ids the API would reject, the same way for calls and results, noting each once.

    ``rewrite`` is the wire's: the id if it fits ``pattern``, else a deterministic rewrite that
    does. ``done`` maps every id seen so far to its wire id: a hot loop may look an id up there
    and call the rewriter only for one it has not seen.
    """

    __slots__ = ("_notes", "_pattern", "_rewrite", "done")

    def __init__(self, notes: list[Note] | None, *, rewrite: Callable[[str], str],
                 pattern: re.Pattern[str]) -> None:
        self._notes = notes
        self._rewrite = rewrite
        self._pattern = pattern
        self.done: dict[str, str] = {}

    def __call__(self, call_id: str) -> str:
        new = self.done.get(call_id)
        if new is None:
            new = self.done[call_id] = self._rewrite(call_id)
            if new != call_id and self._notes is not None:
                self._notes.append(Note(
                    kind="id_rewritten", subject=call_id,
                    detail=f"sent as {new!r}: ids must match {self._pattern.pattern}",
                ))
        return new
