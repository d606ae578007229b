"""The run log: an append-only JSONL record of one agent run, and reading it back.

Owns `RunLog` (the writer); `LoggedRun`, `read_log` and `LOG_FORMAT` (the reader) are
`toolwire.agent.logread`'s, re-exported here.
One JSON object per line, each with ``"event"`` and ``"t"`` (Unix time, seconds), written
unbuffered; a last line cut short by a crash is ignored on reading. A `RunLog` is one of a
run's listeners: it is given each `toolwire.events` event of the run, writes the ones below and
ignores the rest (a tool's progress paced by `toolwire.agent.pacing`).

A line is written before anything is done on the strength of its event: ``call_start`` before
its tool runs, ``call_end`` as soon as its tool has ended, and so every line at once but four.
In a running event loop ``message``, ``request``, ``reply`` and ``first_tool`` are written a
moment after their event: with the next line written at once, in the loop's next step, or at
close, whichever comes first. So writing them does not hold up a request on its way (the run
waits for its reply in that step), and lines that come together go out in one write; each
line's ``t`` is still its event's. A crash in that moment loses only held lines, as a crash a
moment earlier would have: a call's result is in its ``call_end`` line too, and a reply not
written is asked for again on resuming. A failure to write held lines is raised at the next
line, or by `RunLog.close`. Events:

``header``      the log's ``format`` (the first field after the event), toolwire version,
                model name (as the caller calls it, for ``toolwire resume``), ``request_model``
                (as the provider does), system prompt, tool specs, the structured-output tool,
                the run's limits, and ``context``: what a resume elsewhere needs to rebuild the
                agent (the command line writes its folder, tools, approval policy, sandbox
                setting and full model id with its base URL)
``message``     a message added to the history by the harness (the task, tool results, nudges),
                with its index in the history; each message is written once
``request``     a model call: turn number and how many history messages it sent (the unchanged
                prefix is never written again), plus the tool choice
``reply``       the model's reply (its message is the next history entry) and the seconds it took
``call_start``  a tool call is about to run (turn, call id, tool name; ``early``, format 3 on,
                when its reply was still streaming; ``caller`` when code the provider ran made it)
``call_end``    its result and the seconds it took
``first_token`` (format 3 on) the seconds from a request to the first piece of its streamed
                reply
``first_tool``  (format 3 on) the seconds from a request to the first tool start of its turn,
                and whether the reply was still streaming then (``early``)
``call_abandoned`` (format 3 on) a call started early for a reply that never became history
                (it broke off, was cut off, or was retried with other calls): call id, tool
                name, arguments, whether it had ``finished`` or was cancelled part of the way,
                why, and its result when it finished; no result was sent for it
``awaiting_approval`` (format 4 on) the run stopped to wait for decisions on these calls
                (id, name, arguments); ``toolwire resume LOG --allow ID --deny ID`` goes on
``retry``       a model request failed and is being sent again (attempt, wait, the error)
``model``       (format 10 on) which model of a fallback chain answered the turn (null: none
                did), each one passed over before it (``failed``: model, why, error) and what
                the conversation lost on its way to its wire (``losses``)
``progress``    (format 6 on) a tool's progress (tool, progress, total, message; ``count``)
``asked``       (format 6 on) a running tool asked the user (tool, question, action, reason)
``file_seen``   (format 8 on) a built-in file tool is about to touch a file for the first time:
                its path and the SHA-256 of its content then (null: there was no file)
``compact``     (format 5 on) the history was compacted: how, why, estimated tokens before and
                after, and the whole history as it now stands (later indexes follow it)
``stop``        why the run ended, turns, summed usage, notes, and the error if any (its
                type in ``error_type``, format 2 on)
``resume``      the run was continued from this log; ``format`` (format 2 on) is the format of
                the lines after it, which may be newer than the header's when an older log
                is resumed

Media (format 7 on): a media part over `toolwire.mediafiles.INLINE_MAX` bytes is kept once,
by content hash, in the folder ``<log>.media/`` next to the log; its saved form names the file
(``file``, ``size``) instead of holding the base64 ``data``, and reading puts the bytes back.
Signatures (format 9 on): each line ends with ``mac``, a chained HMAC with the user's record key
(`toolwire.records`); reading drops it, `toolwire.signing.verify` checks it.

Format versions: every change to what is written bumps `LOG_FORMAT`; `read_log` reads every
format up to it (2: ``request_model``, ``error_type``, the resume line's ``format``; 3:
``first_token``, ``first_tool``, ``call_abandoned``, ``early``; 4: the header's ``context``,
``awaiting_approval``; 5: ``compact``; 6: ``progress``, ``asked``; 7: media in the folder; 8:
``file_seen``; 9: ``mac``; 10: ``model``). A newer format is refused: upgrade toolwire.

Values are written with `toolwire.transcript_json.to_json`, secrets taken out (`redact_json`).
Must not import the loop, dispatch, codecs or transport; `toolwire.agent.timeline` reads times.
"""

from __future__ import annotations

import functools
import io
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from toolwire import _json, records, signing
from toolwire.agent.logread import LOG_FORMAT as LOG_FORMAT  # the reader's, re-exported
from toolwire.agent.logread import LoggedRun as LoggedRun
from toolwire.agent.logread import is_log_text as is_log_text
from toolwire.agent.logread import read_log as read_log
from toolwire.agent.pacing import ProgressPacer
from toolwire.errors import TranscriptError
from toolwire.events import (
    ApprovalAwaited,
    Compacted,
    Event,
    FileSeen,
    FirstToken,
    FirstToolStart,
    MessageAdded,
    ModelChosen,
    ReplyReceived,
    RequestSent,
    RetryEvent,
    RunResumed,
    RunStopped,
    ToolAbandoned,
    ToolAsked,
    ToolFinished,
    ToolProgress,
    ToolStarted,
)
from toolwire.mediafiles import MediaFiles, fold_fields
from toolwire.secrets import Redactor, redact_json
from toolwire.transcript import (
    Message,
    Reply,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from toolwire.transcript_json import to_json

if TYPE_CHECKING:
    from asyncio import AbstractEventLoop

_encode = msgspec.json.Encoder(enc_hook=str).encode  # compact UTF-8 JSON; else its ``str``


def _line(fields: dict[str, Any]) -> bytes:
    """One event as a JSON line, whatever text it holds: text that is not valid Unicode (a lone
    surrogate a server sent as ``"\\udcff"``) is written with ASCII escapes, read back the same,
    and so are characters some readers take for line ends (`toolwire._json.one_line`)."""
    try:
        data = _encode(fields)
    except UnicodeEncodeError:
        return json.dumps(fields, ensure_ascii=True, default=str).encode()
    return data if data.isascii() else _json.one_line(data)


def _stamp(now: float) -> float:
    """``round(now, 3)``, the time stamp of a line written at ``now``; and the times that
    round to the same stamp kept in `_STAMPED`, so that lines written in the same millisecond
    take it from there. Those times are the stamp less and plus 0.49 ms: a time ``x`` there is
    within 0.49 ms of the stamp, which is within half an ulp of the decimal ``T`` it stands
    for, and the two bounds are each within another half ulp, so ``x`` is less than 0.5 ms
    from ``T`` (an ulp is under 4 microseconds below 2 ** 34 seconds, the year 2514) and
    `round` makes it ``T`` too. Only stamps above a second are kept (near 0 `round` keeps
    the sign of what it rounds)."""
    t = round(now, 3)
    if 1.0 < t < 2.0 ** 34:
        _STAMPED[0] = (t - 0.00049, t + 0.00049, t)
    return t


_STAMPED: list[tuple[float, float, float]] = [(1.0, 0.0, 0.0)]
"""The times (from, to) that round to a stamp, and the stamp (at first none: from above to)."""

_PATH = type(Path())
"""The concrete `Path` class of this system."""
_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
_DEEP_MARGIN = 2000  # levels added to the recursion limit to write an event nested close to it


class RunLog:
    """Writes one run's events to a JSONL file (mode 0600, never through a link), one flushed
    and signed line per event (``key``: the user's record key by default). ``fsync=True`` also
    asks the OS to put every line on disk (survives a power cut, not just a crash);
    ``repair=True`` first drops a last line cut short by a crash (when a run is resumed)."""

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False,
                 repair: bool = False, key: bytes | None = None) -> None:
        self.path = path if type(path) is _PATH else Path(path)  # a Path is not parsed again
        self._fsync = fsync
        key = records.record_key() if key is None else key
        try:  # a new log, made here (never through a link; only the user may read it)
            fd = os.open(self.path, _APPEND | os.O_EXCL, 0o600)
        except FileExistsError:  # one there already: its lines are read and signing goes on
            fd = self._reopen(key, repair)
        except OSError as exc:
            raise self._unwritable(exc) from None
        else:
            self._signer = signing.Signer(key)
        # unbuffered: each line goes to the file in one write, with no buffer to flush
        self._file: io.FileIO | None = io.FileIO(fd, "ab")
        self._turn = 0
        self._held: list[dict[str, Any]] = []  # the lines `_hold` keeps, in order
        self._failed: Exception | None = None  # why writing them failed, for the next line
        self._pacer = ProgressPacer(self._keep)

    @functools.cached_property
    def media(self) -> MediaFiles:
        """The log's media folder, for the lines that hold media."""
        return MediaFiles(self.path)

    def _reopen(self, key: bytes, repair: bool) -> int:
        """A descriptor to append to the log there is (a last line cut short by a crash
        dropped first when ``repair``), its signing going on from its last line."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:  # gone since
            data = b""
        if repair and data and not data.endswith(b"\n"):  # a last line a crash cut short
            with self.path.open("rb+") as f:
                f.truncate(data.rfind(b"\n") + 1)
        self._signer = signing.Signer(key, signing.verify(data, key).last)
        try:  # never through a link at the log's own name
            return os.open(self.path, _APPEND, 0o600)
        except OSError as exc:
            raise self._unwritable(exc) from None

    def _unwritable(self, exc: OSError) -> TranscriptError:
        return TranscriptError(f"the run log {self.path} cannot be written ({exc.strerror}); "
                               "give a regular file, not a link")

    def __call__(self, event: Event) -> None:
        """Write ``event`` if it is one the log keeps (a run listener); a stop closes the log.
        Progress is paced first (`toolwire.agent.pacing`): a line per tool per second."""
        kind = type(event)
        if kind in _PACED:
            self._pacer(event)
        elif kind in _WRITERS:
            self._keep(event)

    def _keep(self, event: Event) -> None:
        """Write the line of ``event`` (one the log keeps)."""
        writer = _WRITERS[type(event)]
        try:
            writer(self, event)
        except RecursionError:  # values nested about as deep as a decoder reads: make room
            _with_room(writer, self, event)

    def write(self, event: str, **fields: Any) -> None:
        """Append one event line now, after any held lines (`_hold`); when one search of the
        line finds media or a secret (docs/security.md), they go to the folder or are taken out
        first."""
        self._put({"event": event, "t": 0.0, **fields})

    def _put(self, fields: dict[str, Any], later: AbstractEventLoop | None = None) -> None:
        """Write ``fields`` (``event`` first, then ``t``, which is set here) as a line, after
        the lines held before it and in the same write; or, given the running event loop as
        ``later``, hold it for that loop's next step (`_hold`)."""
        failed = self._failed
        if failed is not None:  # held lines the loop's step could not write
            self._failed = None
            raise failed
        now = time.time()
        low, high, t = _STAMPED[0]
        if not low <= now <= high:  # not the millisecond of the last stamp
            t = _stamp(now)
        fields["t"] = t
        if later is None:
            self._out(fields)
        else:
            if not self._held:
                later.call_soon(self._write_held)
            self._held.append(fields)

    def _out(self, last: dict[str, Any] | None) -> None:
        """Sign the held lines, and the line of ``last`` after them, and append them to the
        file in one write. Every line is made before any is signed: one that cannot be made
        leaves the file, the signature chain and the held lines as they were."""
        file = self._file
        if file is None:
            raise ValueError(f"run log {self.path} is closed")
        sign = self._signer.sign
        held = self._held
        if not held:
            assert last is not None
            data = sign(self._made(last), b"\n")
        else:
            lines = [self._made(fields) for fields in held]
            if last is not None:
                lines.append(self._made(last))
            self._held = []
            data = b"".join([sign(line, b"\n") for line in lines])
        written = file.write(data)
        if written is None or written < len(data):  # a write may take part of it
            records.write_all(file.fileno(), data[written or 0:])
        if self._fsync:
            os.fsync(file.fileno())

    def _made(self, fields: dict[str, Any]) -> bytes:
        """The line of ``fields``, unsigned: its media moved to the log's folder and its
        secrets taken out first, when one search of the line finds either."""
        line = _line(fields)
        redact = Redactor.shared()
        # `partition`: `in` costs an error, `find` parses its arguments (`Redactor.misses`)
        if line.partition(b'"media"')[1] or not redact.misses(line):
            fold_fields(fields, self.media)
            redacted = redact_json(fields, redact)
            redacted["event"], redacted["t"] = fields["event"], fields["t"]  # never redacted
            line = _line(redacted)
        return line

    def _hold(self, fields: dict[str, Any]) -> None:
        """Write the line ``fields`` a moment later, with its time of now: in the event loop's
        next step (while a request is on its way, the run is waiting for its reply then),
        or before the next line that is written at once, or at close, whichever comes
        first; at once where no event loop runs. For the lines nothing is sent or run on the
        strength of: ``message``, ``request``, ``reply`` and ``first_tool``."""
        asyncio = sys.modules.get("asyncio")  # not imported: no event loop runs
        self._put(fields, asyncio._get_running_loop() if asyncio is not None else None)

    def _write_held(self) -> None:
        """Write the held lines, if they still wait. Called by the event loop, which has no
        one to tell of a failure: it is raised at the next line, and the lines are dropped."""
        if self._held and self._file is not None:
            try:
                try:
                    self._out(None)
                except RecursionError:  # values nested about as deep as a decoder reads
                    _with_room(self._out, None)
            except Exception as exc:
                self._held = []
                self._failed = exc

    def header(self, *, model: str, system: str | None, tools: Sequence[ToolSpec],
               output: ToolSpec | None = None, settings: Mapping[str, Any] | None = None,
               request_model: str | None = None, context: Mapping[str, Any] | None = None
               ) -> None:
        from toolwire.version import __version__

        self.write("header", format=LOG_FORMAT, toolwire=__version__, model=model,
                   request_model=model if request_model is None else request_model,
                   system=system, tools=[to_json(t) for t in tools],
                   output=to_json(output) if output is not None else None,
                   settings=dict(settings or {}), context=dict(context or {}))

    def message(self, index: int, message: Message) -> None:
        self.write("message", index=index, message=to_json(message))

    def request(self, turn: int, messages: int, tool_choice: ToolChoice | None) -> None:
        choice = to_json(tool_choice) if tool_choice is not None else None
        self.write("request", turn=turn, messages=messages, tool_choice=choice)

    def reply(self, turn: int, index: int, reply: Reply, seconds: float) -> None:
        self.write("reply", turn=turn, index=index, reply=to_json(reply),
                   seconds=round(seconds, 6))

    def call_start(self, turn: int, call: ToolCallPart, early: bool = False) -> None:
        fields = {"event": "call_start", "t": 0.0, "turn": turn, "call_id": call.id,
                  "name": call.name}
        if early:
            fields["early"] = True
        if call.caller is not None:  # made by code the provider ran, not by the model
            fields["caller"] = call.caller
        self._put(fields)

    def call_end(self, turn: int, result: ToolResultPart, seconds: float) -> None:
        self.write("call_end", turn=turn, call_id=result.call_id, result=to_json(result),
                   seconds=round(seconds, 6))

    def retry(self, turn: int, event: RetryEvent) -> None:
        self.write("retry", turn=turn, attempt=event.attempt, wait=round(event.wait, 6),
                   error=str(event.error), error_type=type(event.error).__name__)

    def stop(self, stop: str, *, turns: int, usage: Usage, notes: Sequence[str],
             error: BaseException | None = None) -> None:
        detail = None if error is None else f"{type(error).__name__}: {error}"
        self.write("stop", stop=str(stop), turns=turns, usage=to_json(usage), notes=list(notes),
                   error=detail, error_type=None if error is None else type(error).__name__)

    # ------------------------------------------------------------------ as a run's listener

    # the events of every turn write their lines themselves (as `message`, `request`, `reply`
    # and `call_end` do): a call less for each line

    def _on_message(self, e: MessageAdded) -> None:
        self._hold({"event": "message", "t": 0.0, "index": e.index,
                    "message": to_json(e.message)})

    def _on_request(self, e: RequestSent) -> None:
        self._turn = e.turn
        choice = e.request.tool_choice
        self._hold({"event": "request", "t": 0.0, "turn": e.turn,
                    "messages": len(e.request.messages),
                    "tool_choice": to_json(choice) if choice is not None else None})

    def _on_reply(self, e: ReplyReceived) -> None:
        self._hold({"event": "reply", "t": 0.0, "turn": e.turn, "index": e.index,
                    "reply": to_json(e.reply), "seconds": round(e.seconds, 6)})

    def _on_start(self, e: ToolStarted) -> None:
        self.call_start(e.turn, e.call, e.early)

    def _on_first_tool(self, e: FirstToolStart) -> None:
        self._hold({"event": "first_tool", "t": 0.0, "turn": e.turn,
                    "seconds": round(e.seconds, 6), "early": e.early})

    def _on_abandoned(self, e: ToolAbandoned) -> None:
        result = to_json(e.result) if e.result is not None else None
        self.write("call_abandoned", turn=e.turn, call_id=e.call.id, name=e.call.name,
                   arguments=e.call.arguments, finished=e.finished, reason=e.reason,
                   result=result)

    def _on_end(self, e: ToolFinished) -> None:
        self._put({"event": "call_end", "t": 0.0, "turn": e.turn, "call_id": e.result.call_id,
                   "result": to_json(e.result), "seconds": round(e.seconds, 6)})

    def _on_awaited(self, e: ApprovalAwaited) -> None:
        self.write("awaiting_approval", turn=e.turn,
                   calls=[{"id": c.id, "name": c.name, "arguments": c.arguments_text}
                          for c in e.calls])

    def _on_resume(self, e: RunResumed) -> None:
        self._turn = e.turns
        self.write("resume", format=LOG_FORMAT, messages=e.messages, turns=e.turns)

    def _on_stop(self, e: RunStopped) -> None:
        if self._file is not None:
            self.stop(e.stop, turns=e.turns, usage=e.usage, notes=e.notes, error=e.error)
            self.close()

    def close(self) -> None:
        """Write the lines still held, and close the file; a failure to write them is raised
        once the file is closed."""
        if self._file is not None:
            try:
                self._write_held()
            finally:
                failed, self._failed = self._failed, None
                self._file.close()
                self._file = None
            if failed is not None:
                raise failed

    def __enter__(self) -> RunLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _with_room(write: Callable[..., None], *args: Any) -> None:
    """``write(*args)`` with the recursion limit raised by `_DEEP_MARGIN` while it runs: for
    a line whose values are nested about as deep as a decoder reads (the event and the line
    add a few levels)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + _DEEP_MARGIN)
    try:
        write(*args)
    finally:
        sys.setrecursionlimit(limit)


_PACED = frozenset({ToolProgress, ToolFinished, RunStopped})
"""The events the log's `ProgressPacer` sees first: progress, and what lets held progress go."""

_WRITERS: dict[type[Any], Callable[[RunLog, Any], None]] = {
    MessageAdded: RunLog._on_message,
    RequestSent: RunLog._on_request,
    RetryEvent: lambda log, e: log.retry(log._turn, e),
    ReplyReceived: RunLog._on_reply,
    ToolStarted: RunLog._on_start,
    FirstToken: lambda log, e: log.write("first_token", turn=e.turn, seconds=round(e.seconds, 6)),
    FirstToolStart: RunLog._on_first_tool,
    ToolAbandoned: RunLog._on_abandoned,
    ToolFinished: RunLog._on_end,
    RunResumed: RunLog._on_resume,
    RunStopped: RunLog._on_stop,
    ApprovalAwaited: RunLog._on_awaited,
    ToolProgress: lambda log, e: log.write("progress", **asdict(e)),
    ToolAsked: lambda log, e: log.write("asked", **asdict(e)),
    FileSeen: lambda log, e: log.write("file_seen", **asdict(e)),
    ModelChosen: lambda log, e: log.write("model", turn=log._turn, **asdict(e)),
    Compacted: lambda log, e: log.write("compact", how=e.how, why=e.why, before=e.before,
                                        after=e.after, messages=[to_json(m) for m in e.messages]),
}
"""What the log writes for each event it keeps; other events (stream deltas, wire notes) it
skips."""


__all__ = ["LOG_FORMAT", "LoggedRun", "RunLog", "is_log_text", "read_log"]
