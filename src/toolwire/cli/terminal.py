"""What a run looks like on the terminal: the status line, the model's text, each call and its
result, the approval and ``ask_user`` prompts, and the closing lines.

Owns `Terminal`, a run listener that narrates from the run's events alone (so a run and a
resumed run read the same), `approver`, `answerer`, `policy` and `finish`. The model's text of
a turn is shown when its reply arrives, and a call's line before its approval prompt, so a
person never approves blind. Wire notes are summed up in one line (all of them with
``--verbose``). Lines are coloured with `rich` on a terminal (`Painter`), plain when the output
is not a terminal, with ``--no-color`` or with ``NO_COLOR``. Imports only the command line's
`common` and `interrupts`, library events and values, and `rich` when it colours.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any, TextIO

from toolwire.cli.common import EXIT_BAD_REPLY, EXIT_OK, EXIT_PROBLEM
from toolwire.escapes import neutral, visible
from toolwire.secrets import Redactor, StreamRedactor
from toolwire.transcript import Usage

CALL_CHARS, RESULT_LINES, RESULT_CHARS, PROMPT_CHARS = 200, 6, 160, 300

STYLES = {"text": "cyan", "call": "yellow", "ok": "green", "error": "red", "retry": "magenta",
          "end": "bold", "note": "dim"}
"""The colour of each kind of line (`rich` style names)."""


class Painter:
    """Writes lines to one stream, coloured with `rich` when ``mode`` says so: ``always``, or
    ``auto`` on a terminal; plain text otherwise (and when `rich` is not installed)."""

    def __init__(self, stream: TextIO, mode: str = "auto") -> None:
        self.stream = stream
        self.redact = Redactor()  # secrets never reach the screen, whoever wrote them
        self.console: Any = None
        self._open: str | None = None  # what resets the colour of a line still being written
        if mode == "always" or (mode == "auto" and stream.isatty()):
            try:
                from rich.console import Console
            except ImportError:  # plain text: colour is an extra (toolwire[cli])
                return
            self.console = Console(file=stream, force_terminal=True, color_system="standard",
                                   highlight=False, markup=False, emoji=False, soft_wrap=True)

    def line(self, text: str, kind: str | None = None) -> None:
        text = neutral(self.redact(text))  # and no escape sequence a model or server wrote
        if self.console is None or kind is None:
            print(text, file=self.stream, flush=True)
        else:
            self.console.print(text, style=STYLES[kind])
            self.stream.flush()

    def part(self, text: str, kind: str) -> None:
        """A piece of a line as it arrives (streamed text), with no line end: the colour is
        set before the first piece and reset by `end`, so the text stays whole on screen."""
        if self.console is not None and self._open is None:
            from rich.color import ColorSystem
            from rich.style import Style

            start, _, self._open = Style.parse(STYLES[kind]).render(
                "\0", color_system=ColorSystem.STANDARD).partition("\0")
            self.stream.write(start)
        self.stream.write(neutral(text))  # redacted by the caller (`Terminal`: pieces)
        self.stream.flush()

    def end(self) -> None:
        """End the pieces of a line written by `part`."""
        self.stream.write((self._open or "") + "\n")
        self._open = None
        self.stream.flush()


class Terminal:
    """Status line, streamed text and prompts on a terminal (plain lines when not a TTY)."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None,
                 interactive: bool | None = None, *, verbose: bool = False,
                 color: str = "auto") -> None:
        self.out, self.err = out or sys.stdout, err or sys.stderr
        self.paint, self.paint_err = Painter(self.out, color), Painter(self.err, color)
        self.live = self.err.isatty()
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        self.verbose = verbose
        self.turn = 0
        self.usage = Usage()
        self.activity = "waiting for the model"
        self.answer_shown = False
        self.last_text: str | None = None  # the text of the last reply, if it is on screen
        self.running: set[str] = set()
        self._streamed = False
        self._pieces = StreamRedactor(self.paint.redact)  # a key split across pieces too
        self._calls: dict[str, Any] = {}  # the calls of the last reply, by id
        self._shown: set[str] = set()  # ids of calls whose line is already on screen
        self._answering: str | None = None  # the fallback chain's model shown last

    # ------------------------------------------------------------------ the screen

    def status(self) -> None:
        if self.live and not self._streamed:  # never over a line of text still arriving
            line = (f"turn {self.turn} · {self.activity} · {self.usage.total_tokens:,} tokens")
            line = visible(self.paint.redact(line))[: shutil.get_terminal_size().columns - 1]
            self.err.write("\r\x1b[2K" + line)
            self.err.flush()

    def clear(self) -> None:
        if self.live and not self._streamed:
            self.err.write("\r\x1b[2K")
            self.err.flush()

    def say(self, text: str, kind: str | None = None) -> None:
        self.clear()
        self.paint.line(text, kind)
        self.status()

    def ask(self, prompt: str) -> str:
        """A line typed at ``prompt`` ("" at the end of input); Ctrl-C ends the wait at once
        (`KeyboardInterrupt`), from whatever thread asks."""
        from toolwire.cli.interrupts import interrupts

        self.clear()
        line = interrupts().read_line(neutral(self.paint.redact(prompt)))
        return "" if line is None else line

    def show_call(self, call: Any) -> None:
        """The line naming a call and its arguments, once per call."""
        if call.id not in self._shown:
            self._shown.add(call.id)
            self.say(f"  → {visible(call.name)} {visible(call.arguments_text)[:CALL_CHARS]}",
                     "call")

    # ------------------------------------------------------------------ events

    def on_event(self, event: object) -> None:
        from toolwire.events import (
            MessageAdded,
            ModelChosen,
            ReplyReceived,
            RetryEvent,
            TextDelta,
            ToolAsked,
            ToolCallStarted,
            ToolFinished,
            ToolProgress,
            ToolStarted,
        )

        if isinstance(event, TextDelta):
            self.clear()
            self._streamed = True
            self.paint.part(self._pieces.feed(event.text), "text")
        elif isinstance(event, ReplyReceived):
            self._reply(event.turn, event.reply)
        elif isinstance(event, MessageAdded) and event.message.role == "tool":
            self._results(event.message)
        elif isinstance(event, ToolStarted):
            self.running.add(event.call.id)
            self.activity = f"running {event.call.name}"
            if not self._streamed:  # what runs is on screen while it runs
                self.show_call(event.call)
            self.status()
        elif isinstance(event, ToolFinished):
            self.running.discard(event.call.id)
            self.activity = "running tools" if self.running else "waiting for the model"
            self.status()
        elif isinstance(event, ToolCallStarted):
            self.activity = f"model is writing a call to {event.name}"
            self.status()
        elif isinstance(event, ToolProgress):
            self.activity = f"running {event.tool}: {progress_text(event)}"
            self.status()
        elif isinstance(event, ToolAsked) and event.action != "accept":
            self.say(f"  ? {event.tool} asked {event.question[:RESULT_CHARS]!r}: "
                     f"{event.action}{f' ({event.reason})' if event.reason else ''}", "retry")
        elif isinstance(event, RetryEvent):
            if self._streamed:  # what the broken attempt's text held back is shown, not kept
                self.paint.part(self._pieces.flush(), "text")
            self.say(f"[retry] {event.error} (attempt {event.attempt}; waiting "
                     f"{event.wait:.1f} s)", "retry")
        elif isinstance(event, ModelChosen):
            self._chosen(event)

    def _chosen(self, event: Any) -> None:
        """Which model of a fallback chain answered (when it is another than the turn before's,
        or ``verbose``), why the chain moved, what was lost."""
        for name, why, error in event.failed:
            self.say(f"[fallback] {name} failed ({why}): {error[:RESULT_CHARS]}", "retry")
        if event.failed or event.model != self._answering or self.verbose:
            self.say(f"[model] {event.model or 'no model of the chain answered'}",
                     "retry" if event.failed else None)
        self._answering = event.model
        if self.verbose:
            for loss in event.losses:
                self.say(f"[fallback] lost on the way to {event.model}: {loss}", "retry")
        elif event.losses:
            kinds = Counter(loss.split(":", 1)[0] for loss in event.losses)
            said = ", ".join(f"{n} {kind}" for kind, n in kinds.items())
            self.say(f"[fallback] lost on the way to {event.model}: {said} (-v for each)",
                     "retry")

    def _reply(self, turn: int, reply: Any) -> None:
        streamed, self._streamed = self._streamed, False
        if streamed:
            self.paint.part(self._pieces.flush(), "text")
            self.paint.end()
        self.turn = turn
        self.usage = self.usage + reply.usage
        self.answer_shown = streamed and not reply.tool_calls
        self.last_text = reply.text if streamed else None
        self._calls = {call.id: call for call in reply.tool_calls}
        self._shown &= set(self._calls)  # a call that started early is on screen already
        if reply.text and reply.tool_calls and not streamed:
            self.say(f"model: {reply.text}", "text")
            self.last_text = reply.text
        self.activity = "running tools" if reply.tool_calls else "waiting for the model"
        self.status()

    def _results(self, message: Any) -> None:
        for result in message.tool_results:
            call = self._calls.get(result.call_id)
            if call is not None:
                self.show_call(call)
            mark = "error" if result.is_error else "ok"
            first = result.text.strip("\n").rstrip().splitlines()[:RESULT_LINES]
            shown = "\n".join("      " + line[:RESULT_CHARS] for line in first)
            media = "".join(f", {m.kind} {m.media_type}" for m in result.media)
            self.say(f"  ← {mark} ({len(result.text)} chars{media})", mark)
            if shown:
                self.say(shown)
        self.activity = "waiting for the model"
        self.status()


def progress_text(event: Any) -> str:
    """A tool's progress as the status line shows it: ``40% step 2 of 5`` or ``3 step 3``."""
    total = event.total
    done = f"{min(event.progress / total, 1.0):.0%}" if total else f"{event.progress:g}"
    return f"{done} {event.message}" if event.message else done


def approver(term: Terminal, shown: Any = None) -> Any:
    """The approval callback: asks at the terminal, after showing the call it is about
    (``shown(request)``, when given, says in full what the call will do)."""
    from toolwire.agent.dispatch import Approval

    def approve(req: Any) -> Any:
        if not term.interactive:
            return Approval.deny("no one was at the terminal to approve it; run with "
                                 "--approve auto to allow it")
        term.show_call(req.call)
        if shown is not None:
            term.say(shown(req))
        args = visible(json.dumps(req.arguments, ensure_ascii=False))
        if len(args) > PROMPT_CHARS:
            args = f"{args[:PROMPT_CHARS]}... ({len(args) - PROMPT_CHARS} more characters)"
        answer = term.ask(f"allow {visible(req.call.name)} {args}? [y/N/reason] ").strip()
        if answer.lower() in ("y", "yes"):
            return Approval.allow()
        reason = None if answer.lower() in ("", "n", "no") else answer
        return Approval.deny(reason)

    return approve


def answerer(term: Terminal, who: str = "the model asks: ") -> Any:
    """The ``ask_user`` callback at the terminal, or None when no one is there; ``who`` opens
    each question (an MCP server's questions say who asks themselves: give "")."""
    if not term.interactive:
        return None

    def answer(question: str, choices: Sequence[str] | None) -> str:
        hint = f" ({' / '.join(choices)})" if choices else ""
        return term.ask(f"\n{who}{question}{hint}\n> ")

    return answer


def policy(mode: str, sandbox: Any = None, builtin: Sequence[str] = (),
           trusted: Sequence[str] = ()) -> Any:
    """The approval policy for ``--approve ask|auto|never|defer``; ``run_tests`` is asked about
    too when ``sandbox`` does not confine commands. Of the tools that are not ``builtin``
    (MCP tools, and tools that join later), every one goes through the same policy as
    ``run_command``, but those in ``trusted``: a server's own word that a tool only reads
    counts only where the user said so (the ``mcp_read_only`` setting)."""
    from toolwire.agent.toollist import SEARCH_TOOL
    from toolwire.tools.coding import NEEDS_APPROVAL, needs_approval

    if mode == "auto":
        return "allow"
    value = {"ask": "ask", "defer": "defer"}.get(mode, "deny")
    names = NEEDS_APPROVAL if sandbox is None else needs_approval(sandbox)
    safe = {name: "allow" for name in (*builtin, *trusted, SEARCH_TOOL) if name not in names}
    return {"*": value, **safe, **{name: value for name in names}}


def usage_json(usage: Usage) -> dict[str, Any]:
    """A run's usage with every count named, zeros included."""
    return {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "reasoning_tokens": usage.reasoning_tokens, "cost": usage.cost}


def end_line(result: Any, log: str | None) -> str:
    """The closing line: why the run stopped, turns, tokens, cache hits, cost when known."""
    usage = result.usage
    parts = [f"stopped: {result.stop} after {result.turns} turn(s)",
             f"{usage.total_tokens:,} tokens ({usage.input_tokens:,} in, "
             f"{usage.output_tokens:,} out)"]
    if usage.cache_read_tokens:
        parts.append(f"{usage.cache_read_tokens:,} read from the prompt cache")
    if usage.cost is not None:
        parts.append(f"cost ${usage.cost:.4f}")
    line = ", ".join(parts) + (f"; log: {log}" if log else "")
    if log and str(result.stop) not in ("answered", "awaiting_approval"):
        line += f"; toolwire resume {log} goes on"  # awaiting: the lines above say how
    return line


ROUTINE = frozenset({"max_tokens_defaulted", "cache_breakpoints", "cache_key"})
"""Note kinds every run of a wire has (a default filled in, the usual cache markers): shown
only with ``--verbose``, so the notes line appears when there is something new to read."""


def notes_lines(notes: Sequence[str], verbose: bool) -> list[str]:
    """Every note with ``verbose``; else one line counting them by kind, routine ones left
    out (no line when all are routine)."""
    if verbose or not notes:
        return [f"note: {note}" for note in notes]
    kinds = Counter(k for k in (_kind(note) for note in notes) if k not in ROUTINE)
    if not kinds:
        return []
    summary = ", ".join(f"{n} {kind}" for kind, n in kinds.items())
    return [f"notes: {summary} (--verbose shows them)"]


def _kind(note: str) -> str:
    """A wire note reads ``wire: kind: subject: detail``; others are counted as notes."""
    parts = note.split(": ")
    if len(parts) > 2 and parts[1].replace("_", "").isalpha() and parts[1].islower():
        return parts[1]
    return "run note"


def waiting_calls(result: Any) -> list[Any]:
    """The calls a run stopped to wait for (stop ``awaiting_approval``): the last reply's."""
    if str(result.stop) != "awaiting_approval":
        return []
    replies = [m for m in result.messages if m.role == "assistant"]
    return list(replies[-1].tool_calls) if replies else []


def waiting_lines(calls: Sequence[Any], log: str | None) -> list[str]:
    """What waits for a decision, and the commands that give one."""
    lines = [f"waiting for a decision on {len(calls)} call(s):"]
    lines += [f"  {c.id}  {c.name} {c.arguments_text[:CALL_CHARS]}" for c in calls]
    if log:
        ids = " ".join(f"--allow {c.id}" for c in calls)
        lines.append(f"answer with: toolwire resume {log} {ids} (or --deny ID --reason TEXT "
                     "for a call you refuse)")
    return lines


def finish(result: Any, term: Terminal, as_json: bool, log: str | None) -> int:
    """Print a run's outcome (text, or JSON on stdout) and return its exit code."""
    term.clear()
    notes = list(result.notes)
    waiting = waiting_calls(result)
    if as_json:
        data = {"stop": str(result.stop), "answer": None if waiting else result.answer,
                "turns": result.turns, "usage": usage_json(result.usage), "notes": notes,
                "log": log, "error": str(result.error) if result.error else None}
        if waiting:
            data["waiting"] = [{"id": c.id, "tool": c.name, "arguments": c.arguments}
                               for c in waiting]
        print(json.dumps(data, indent=2))
    else:
        if (result.answer and not waiting and not term.answer_shown
                and result.answer != term.last_text):
            term.paint.line(f"\n{result.answer}")
        term.paint_err.line("")
        for line in notes_lines(notes, term.verbose):
            term.paint_err.line(line, "note")
        if result.error:
            term.paint_err.line(f"error: {result.error}", "error")
        for line in waiting_lines(waiting, log) if waiting else []:
            term.paint_err.line(line, "call")
        term.paint_err.line(end_line(result, log), "end")  # the last line says why it stopped
    if result.ok:
        return EXIT_OK
    return EXIT_BAD_REPLY if result.stop == "bad_reply" else EXIT_PROBLEM
