"""What a run log says of a run's time: per-turn timings and when each model call and tool ran.

Owns `Timeline`, `TimeSpan` and `TIMED` (the log lines it reads). `toolwire.agent.runlog`
gives it each such line as it reads a log; `toolwire explain` shows the timings per turn and
the HTML report draws the spans on a time axis, where a tool started early overlaps the model
call whose reply was still streaming. Logs written before format 3 have no ``first_token``,
``first_tool`` or ``call_abandoned`` lines: their spans still come from the timestamps of the
``request``, ``reply``, ``call_start`` and ``call_end`` lines. Imports nothing from toolwire.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TIMED = frozenset({"request", "reply", "call_start", "call_end", "first_token", "first_tool",
                   "call_abandoned"})
"""The log lines that say something of the run's time."""


@dataclass(frozen=True, slots=True)
class TimeSpan:
    """Something that took time in a run, placed by its log lines' timestamps (Unix seconds):
    a model call (``lane`` ``model``, from its request to its reply) or a tool call (``tools``,
    from its start to its end; ``early`` when it started while its reply was still streaming).
    ``turn`` is the model call it belongs to."""

    lane: str
    label: str
    turn: int
    start: float
    end: float
    early: bool = False


@dataclass(slots=True)
class Timeline:
    """``turns`` maps each turn to what the log says of its time (``reply``: the model call's
    seconds; ``first_token`` and ``first_tool``: seconds from the request; ``early``: whether
    the first tool started while the reply streamed); ``spans`` are the model calls and tool
    calls in the order they ended; ``abandoned`` the ``call_abandoned`` lines."""

    turns: dict[int, dict[str, Any]] = field(default_factory=dict)
    spans: list[TimeSpan] = field(default_factory=list)
    abandoned: list[dict[str, Any]] = field(default_factory=list)
    _open: dict[str, tuple[float, int, bool, str]] = field(default_factory=dict)

    def read(self, kind: str, event: dict[str, Any]) -> None:
        """Take in one log line of a ``TIMED`` kind (lines without a usable turn or
        timestamp are skipped: they tell nothing of time)."""
        t, turn = event.get("t"), event.get("turn")
        if not isinstance(turn, int) or isinstance(turn, bool) \
                or not isinstance(t, int | float) or isinstance(t, bool):
            return
        at = float(t)
        if kind == "request":
            self._open["request"] = (at, turn, False, "")
        elif kind == "call_start":
            self._open[f"call:{event.get('call_id')}"] = (
                at, turn, event.get("early") is True, str(event.get("name") or "tool"))
        elif kind in ("call_end", "call_abandoned"):
            if kind == "call_abandoned":
                self.abandoned.append(event)
            opened = self._open.pop(f"call:{event.get('call_id')}", None)
            if opened is not None:
                start, began, early, name = opened
                self.spans.append(TimeSpan("tools", name, began, start, at, early))
        else:  # the turn's reply, first token or first tool start
            timing = self.turns.setdefault(turn, {})
            seconds = event.get("seconds")
            if isinstance(seconds, int | float) and not isinstance(seconds, bool):
                timing[kind] = float(seconds)
            if kind == "first_tool":
                timing["early"] = event.get("early") is True
            opened = self._open.pop("request", None) if kind == "reply" else None
            if opened is not None:
                self.spans.append(TimeSpan("model", f"model call {turn}", turn, opened[0], at))


__all__ = ["TIMED", "TimeSpan", "Timeline"]
