"""Reading a run log back: the run it tells (`toolwire.agent.runlog` writes it).

Owns `LoggedRun` (the history rebuilt, the calls still pending, usage, retries, the models of
a fallback chain, timings), `read_log`, `is_log_text` and `LOG_FORMAT`, the format version
toolwire writes and the newest it reads (the events and what each format added are listed in
`toolwire.agent.runlog`). A last line cut short by a crash is ignored; a line whose signature
field is there is read without it (`toolwire.signing.verify` checks it). Must not import the
loop, dispatch, codecs or transport; `toolwire.agent.timeline` reads times.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolwire import _json
from toolwire.agent.timeline import TIMED, Timeline
from toolwire.errors import TranscriptError
from toolwire.mediafiles import MediaFiles, unfold_fields
from toolwire.transcript import Message, Reply, ToolCallPart, ToolResultPart, Usage
from toolwire.transcript_json import from_json

LOG_FORMAT = 10
"""The format version this toolwire writes; it reads this one and every earlier one."""


@dataclass(slots=True)
class LoggedRun:
    """A run as its log tells it.

    ``messages`` is the history rebuilt from ``message`` and ``reply`` events. ``pending`` are
    the calls of the last assistant message when no tool message answers them yet;
    ``started`` holds the ids of calls that began running and ``results`` the results of calls
    that finished (so a pending call is one of: never started, started but cut off, finished).
    ``awaiting`` are the ids of the calls the run stopped to wait for decisions on (cleared when
    it is resumed). ``turn_usage`` is each reply's usage in order (``usage`` is their sum),
    ``retries`` and ``models`` the logged ``retry`` and ``model`` events, ``notes`` the notes
    of the last ``stop``.
    ``time`` is what the lines say of the run's time (`toolwire.agent.timeline.Timeline`:
    per-turn timings, when each model call and tool ran, the calls abandoned). ``files``: the
    SHA-256 each file had when a built-in file tool first touched it (None: no file), by path.
    """

    path: Path
    header: dict[str, Any]
    messages: list[Message] = field(default_factory=list)
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    turn_usage: list[Usage] = field(default_factory=list)
    retries: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    started: set[str] = field(default_factory=set)
    results: dict[str, ToolResultPart] = field(default_factory=dict)
    stop: str | None = None
    awaiting: list[str] = field(default_factory=list)
    torn: bool = False
    time: Timeline = field(default_factory=Timeline)
    files: dict[str, str | None] = field(default_factory=dict)
    models: list[dict[str, Any]] = field(default_factory=list)

    @property
    def pending(self) -> tuple[ToolCallPart, ...]:
        if self.messages and self.messages[-1].role == "assistant":
            return self.messages[-1].tool_calls
        return ()


def _load(data: Any, kind: type[Any], where: str) -> Any:
    value = from_json(data)
    if not isinstance(value, kind):
        raise TranscriptError(f"{where}: expected a {kind.__name__}, got {type(value).__name__}")
    return value


def _put(run: LoggedRun, index: Any, message: Message, where: str) -> None:
    if index != len(run.messages):
        raise TranscriptError(
            f"{where}: message index {index!r} does not follow the {len(run.messages)} "
            "messages before it; the log was edited or mixes two runs"
        )
    run.messages.append(message)


def is_log_text(text: str) -> bool:
    """Whether ``text`` (a file's contents) is a run log: its first line is a log header."""
    first = text.lstrip().split("\n", 1)[0]
    try:
        head = _json.loads(first)  # the project's limits: a line nested past them is no header
    except ValueError:
        return False
    return isinstance(head, dict) and head.get("event") == "header"


def _check_format(version: Any, where: str) -> None:
    """Refuse a log whose format this toolwire cannot read, saying which and what to do."""
    number = isinstance(version, int) and not isinstance(version, bool)
    if number and 1 <= version <= LOG_FORMAT:
        return
    from toolwire.version import __version__

    if number and version > LOG_FORMAT:
        raise TranscriptError(
            f"{where}: run log format {version} is not supported by this toolwire "
            f"({__version__}), which reads formats 1 to {LOG_FORMAT}: a newer toolwire wrote "
            "it. Upgrade toolwire (pip install -U toolwire) to read, explain or resume it"
        )
    raise TranscriptError(
        f"{where}: run log format {version!r} is not supported: toolwire writes formats 1 to "
        f"{LOG_FORMAT}, numbered; the header line was edited or this is not a toolwire run log"
    )


def _check_header(header: dict[str, Any], where: str) -> None:
    """Refuse a header whose fields have the wrong types, naming the field."""
    for key in ("model", "request_model", "system", "toolwire"):
        if header.get(key) is not None and not isinstance(header[key], str):
            raise TranscriptError(f"{where}: the header's {key!r} must be a string, got "
                                  f"{type(header[key]).__name__}")
    tools = header.get("tools")
    if tools is not None and not (isinstance(tools, list) and all(
            isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools)):
        raise TranscriptError(f"{where}: the header's 'tools' must be a list of tool "
                              "definitions, each with a string 'name'")
    for key in ("settings", "output"):
        if header.get(key) is not None and not isinstance(header[key], dict):
            raise TranscriptError(f"{where}: the header's {key!r} must be an object")


def read_log(path: str | os.PathLike[str]) -> LoggedRun:
    """Read a run log back. A last line cut short by a crash is skipped (``torn=True``).

    Raises `TranscriptError` naming the line for anything else that cannot be read.
    """
    where_file = Path(path)
    lines = where_file.read_text(encoding="utf-8").split("\n")
    run: LoggedRun | None = None
    media = MediaFiles(where_file)
    last = len(lines) - 1
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{where_file}:{number}"
        try:
            event = _json.loads(line)
        except json.JSONDecodeError as exc:
            if number - 1 == last:  # the final line has no newline: cut off mid-write
                if run is not None:
                    run.torn = True
                continue
            raise TranscriptError(f"{where}: not a JSON line ({exc.msg})") from None
        if not isinstance(event, dict) or "event" not in event:
            raise TranscriptError(f"{where}: a run log line must be an object with 'event'")
        event.pop("mac", None)  # the line's signature (`toolwire.records`), checked apart
        if run is None:
            if event["event"] != "header":
                raise TranscriptError(f"{where}: a run log starts with a header line")
            _check_format(event.get("format"), where)
            _check_header(event, where)
            run = LoggedRun(path=where_file, header=event)
            continue
        try:
            unfold_fields(event, media, where)
            _read_event(run, event, where)
        except TranscriptError as exc:  # named by its line, once
            named = str(exc).startswith(where)
            raise exc if named else TranscriptError(f"{where}: {exc}") from None
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise TranscriptError(f"{where}: a {event['event']!r} line holds a value of the "
                                  f"wrong type ({type(exc).__name__}: {exc}); the log was "
                                  "edited or damaged") from None
    if run is None:
        raise TranscriptError(f"{where_file}: empty run log (no header line)")
    return run


def _read_event(run: LoggedRun, event: dict[str, Any], where: str) -> None:
    """Add what one line after the header tells to ``run``."""
    kind = event["event"]
    if kind in TIMED:
        run.time.read(kind, event)
    if kind == "message":
        _put(run, event.get("index"), _load(event.get("message"), Message, where), where)
    elif kind == "reply":
        reply: Reply = _load(event.get("reply"), Reply, where)
        _put(run, event.get("index"), reply.message, where)
        run.turns = max(run.turns, int(event.get("turn", run.turns + 1)))
        run.usage = run.usage + reply.usage
        run.turn_usage.append(reply.usage)
    elif kind == "retry":
        run.retries.append(event)
    elif kind == "model":
        run.models.append(event)
    elif kind == "call_start":
        run.started.add(str(event.get("call_id")))
    elif kind == "call_end":
        result: ToolResultPart = _load(event.get("result"), ToolResultPart, where)
        run.results[result.call_id] = result
    elif kind == "stop":
        if not isinstance(event.get("stop"), str):
            raise TypeError(f"'stop' must be a string, got {type(event.get('stop')).__name__}")
        run.stop = event["stop"]
        run.notes = [str(n) for n in event.get("notes") or ()]
    elif kind == "compact":
        run.messages = [_load(m, Message, where) for m in event.get("messages") or ()]
    elif kind == "file_seen" and isinstance(event.get("path"), str):
        sha = event.get("sha256")
        run.files.setdefault(event["path"], sha if isinstance(sha, str) else None)
    elif kind == "awaiting_approval":
        run.awaiting = [str(c.get("id")) for c in event.get("calls") or () if isinstance(c, dict)]
    elif kind == "resume":
        if "format" in event:
            _check_format(event["format"], where)
        run.stop, run.awaiting = None, []


__all__ = ["LOG_FORMAT", "LoggedRun", "is_log_text", "read_log"]
