"""The ``replay`` command: a recorded run played again with its tools running for real.

Owns `cmd_replay` and its parser; the recording it plays is `toolwire.cli.recording`'s
(`Recording`, `read_recording`, re-exported here). The model's turns are
answered from the recording by the provider emulator over loopback HTTP, in the recorded wire or
``--wire``; the built-in tools run in ``--workdir`` (or the recorded folder). Each result is
compared with the recorded one (after the folder's path and test runners' timings are masked);
the first that differs is shown as a diff, with what the log's file hashes say: a file the tool
touched was different at the start, or every such file was as recorded and the tool now behaves
differently. Uses the run commands' pieces (`toolwire.cli.run`); nothing below imports it.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import hashlib
import json
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolwire.cli import checks, trust
from toolwire.cli.common import EXIT_OK, EXIT_PROBLEM, UserError
from toolwire.cli.outputs import copy_folder
from toolwire.cli.recording import Recording as Recording
from toolwire.cli.recording import read_recording as read_recording
from toolwire.codecs import WIRES
from toolwire.escapes import neutral, visible

DECLINED = re.compile(r"(?:This call to '.*?' was denied by (?P<by>.*?)\.|The user declined this "
                      r"call to '.*?'\.)(?: Their reason: (?P<reason>.*))?", re.S)
TIMINGS = re.compile(r"\b(in|took) \d+(?:\.\d+)?\s?(?:s|ms|seconds)\b")


# ------------------------------------------------------------------------------- comparing


def _shown(result: Any, workdir: Path, recorded_dir: str | None) -> str:
    """A result as compared: its text, each media part as one line naming its kind, type,
    size and hash (never its bytes, nor its name, which not every wire carries), the folder's
    path and timings masked."""
    from toolwire.transcript import MediaPart, TextPart
    from toolwire.transcript_json import to_json

    content = result.content
    if isinstance(content, str):
        text = content
    else:
        shown = []
        for part in content:
            if isinstance(part, MediaPart):
                digest = hashlib.sha256(part.data).hexdigest()[:16] if part.data else "-"
                shown.append(f"[{part.kind} {part.media_type}, {len(part.data or b'')} bytes, "
                             f"sha256 {digest}{', ' + part.url if part.url else ''}]")
            elif isinstance(part, TextPart):
                shown.append(part.text)
            else:
                shown.append(json.dumps(to_json(part), ensure_ascii=False))
        text = "\n".join(shown)
    for folder in {str(workdir), recorded_dir} - {None, ""}:
        text = text.replace(str(folder), "<workdir>")
    return ("[error] " if result.is_error else "") + TIMINGS.sub(r"\1 <time>", text)


SEEN_MAX = 64 * 1024 * 1024
"""The largest file whose hash replay compares with the recorded one."""


def _seen(workdir: Path, path: str) -> str | None:
    """The SHA-256 of the file a recording names as ``path``, read only inside ``workdir``
    and only as a regular file (no link, device or FIFO) of at most `SEEN_MAX` bytes; None
    when there is none, else what keeps it from being read (never the same as a hash)."""
    from toolwire.errors import TranscriptError
    from toolwire.records import read_inside

    try:
        return hashlib.sha256(read_inside(workdir, path, SEEN_MAX)).hexdigest()
    except FileNotFoundError:
        return None
    except TranscriptError as exc:
        return f"not read: {exc}"
    except OSError as exc:
        return f"not read: {exc.strerror or exc}"


def _plan(rec: Recording, workdir: str, mode: str, network: bool, test_command: Any,
          coding: bool) -> list[tuple[str, str]]:
    """What a replay of ``rec`` would do, for a record the person is asked about."""
    calls = [c for t in rec.turns for c in t.reply.tool_calls]
    commands = [c for c in calls if c.name in ("run_command", "run_tests")]
    shown = "; ".join(str(c.arguments.get("command", c.name))[:80] for c in commands[:5])
    more = f" and {len(commands) - 5} more" if len(commands) > 5 else ""
    return [("model", "the recording, answered by the emulator on 127.0.0.1 (no key is sent)"),
            ("folder", str(workdir)),
            ("tools", (f"{len(calls)} recorded call(s) run for real there, {len(commands)} of "
                       f"them commands" + (f": {shown}{more}" if commands else ""))
             if coding else "none"),
            ("test command", str(test_command) if test_command else "none"),
            ("sandbox", f"{mode} (a record's own setting is not used)"),
            ("network", "on" if network else "off")]


@dataclass(slots=True)
class Differ:
    """Watches a replay's events and keeps the first result that differs from the recording."""

    rec: Recording
    workdir: Path
    replies: dict[int, Any] = field(default_factory=dict)
    compared: int = 0
    first: tuple[int, int, Any, Any, Any] | None = None

    def on_event(self, event: object) -> None:
        from toolwire.events import ReplyReceived, ToolFinished

        if isinstance(event, ReplyReceived):
            self.replies[event.turn] = event.reply
        elif isinstance(event, ToolFinished):
            calls = self.replies[event.turn].tool_calls
            pos = next(i for i, c in enumerate(calls) if c.id == event.call.id)
            self.check(event.turn, pos, event.call, event.result)

    def recorded(self, turn: int, pos: int) -> Any:
        if turn > len(self.rec.turns):
            return None
        calls = self.rec.turns[turn - 1].reply.tool_calls
        return self.rec.results.get(calls[pos].id) if pos < len(calls) else None

    def check(self, turn: int, pos: int, call: Any, result: Any) -> None:
        recorded = self.recorded(turn, pos)
        self.compared += 1
        where = str(self.rec.context.get("workdir") or "")
        same = recorded is not None and _shown(recorded, self.workdir, where) == _shown(
            result, self.workdir, where)
        if not same and (self.first is None or (turn, pos) < self.first[:2]):
            self.first = (turn, pos, call, recorded, result)


class Player:
    """The model of a replay: the emulator's answers, until a result has differed."""

    def __init__(self, inner: Any, differ: Differ) -> None:
        self._inner, self._differ = inner, differ

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def complete(self, request: Any) -> Any:
        if self._differ.first is not None:
            raise _Differed
        return await self._inner.complete(request)


class _Differed(Exception):
    """A result differed: the replay goes no further."""


def _approver(differ: Differ) -> Any:
    """Decides as the recording did: a call declined then is declined now, with its reason."""
    from toolwire.agent.dispatch import Approval

    def approve(req: Any) -> Any:
        turn = max(differ.replies, default=1)
        calls = differ.replies.get(turn, None)
        pos = next((i for i, c in enumerate(calls.tool_calls) if c.id == req.call.id), 0) \
            if calls is not None else 0
        recorded = differ.recorded(turn, pos)
        found = DECLINED.fullmatch(recorded.content) if recorded is not None and \
            recorded.is_error and isinstance(recorded.content, str) else None
        return Approval.allow() if found is None else Approval.deny(found["reason"], found["by"])

    return approve


def _answers(rec: Recording) -> Any:
    """``ask_user`` answered with what the user answered then, in order."""
    answers = [rec.results[c.id].content for t in rec.turns for c in t.reply.tool_calls
               if c.name == "ask_user" and c.id in rec.results]

    def answer(question: str, choices: Any) -> str:
        return str(answers.pop(0)) if answers else ""

    return answer


async def _play(agent: Any, rec: Recording, log: Path) -> None:
    try:
        result = await agent.arun(rec.task, log=log)
        for turn in rec.turns:
            for line in turn.then:
                if result.turns >= len(rec.turns):
                    return
                result = await agent.aresume(log, message=line)
    except _Differed:
        pass


def cmd_replay(args: argparse.Namespace) -> int:
    from toolwire.tools.sandbox import SANDBOX_MODES

    rec = read_recording(args.log)
    if not rec.turns:
        raise UserError(f"{args.log} holds no reply of the model: there is nothing to replay")
    if rec.written_by == "proxy":  # the client's tools are its own: the model side only
        from toolwire.cli.replay_model import replay_model_side

        return replay_model_side(args, rec)
    if args.in_place and args.workdir:
        raise UserError("give --workdir DIR or --in-place, not both")
    folder = args.workdir or rec.context.get("workdir")
    if not folder:
        raise UserError(f"{args.log} does not say which folder its tools worked in; give "
                        "--workdir DIR")
    workdir = checks.workdir(str(folder))
    wire = args.wire or rec.wire or WIRES[0]
    record = trust.standing(args.log, "cassette")  # read_recording took it for one or a log
    assert record is not None  # a default kind was given
    args.sandbox = args.sandbox or (rec.context.get("sandbox") if record.own else None) or "auto"
    if args.sandbox not in SANDBOX_MODES:
        raise UserError(f"{args.log} names the sandbox setting {args.sandbox!r}, which this "
                        f"toolwire does not know; give --sandbox {' or '.join(SANDBOX_MODES)}")
    args.network = record.own and rec.context.get("allow_network") is True
    if not record.own:
        where = str(workdir) if args.workdir or args.in_place else f"a copy of {workdir}"
        trust.confirm(args, args.log, record, "replay", _plan(
            rec, where, args.sandbox, args.network, rec.context.get("test_command"),
            rec.context.get("tools") != "none"))
    found = {p: (was, _seen(workdir, p)) for p, was in (rec.files or {}).items()}
    changed = {p: hashes for p, hashes in found.items() if hashes[0] != hashes[1]}
    if args.in_place and changed:
        _confirm_in_place(args.log, workdir, sorted(changed))
    with tempfile.TemporaryDirectory(prefix="toolwire-replay-copy-") as copies:
        if not args.workdir and not args.in_place:
            workdir = copy_folder(workdir, Path(copies) / (workdir.name or "workdir"))
            args.shown_folder = f"a copy of {folder}"
            print(f"replaying in a copy of {folder} (without its .toolwire folder; removed "
                  "afterwards); --in-place replays in the folder itself", file=sys.stderr)
        return _replay(args, rec, workdir, wire, changed)


def _confirm_in_place(log: str, workdir: Path, changed: list[str]) -> None:
    """Replay in the live folder only when the person says so, once they know which files
    differ from the recording (and could be overwritten by the tools)."""
    named = ", ".join(changed[:20]) + (f" and {len(changed) - 20} more" if len(changed) > 20
                                        else "")
    print(f"these files in {workdir} differ from the recording of {log}, and the replayed "
          f"tools may overwrite them: {named}", file=sys.stderr)
    if not sys.stdin.isatty():
        raise UserError(f"--in-place: {len(changed)} file(s) differ from the recording (named "
                        "above); replay without --in-place to work in a copy")
    answer = input(f"replay in {workdir} anyway? [y/N] ").strip().lower()
    if answer not in ("y", "yes"):
        raise UserError("--in-place: not confirmed; nothing was replayed")


def _replay(args: argparse.Namespace, rec: Recording, workdir: Path, wire: str,
            changed: dict[str, tuple[str | None, str | None]]) -> int:
    from toolwire.agent.loop import Agent
    from toolwire.emulator import Emulator
    from toolwire.http import client
    from toolwire.http.providers import provider_for
    from toolwire.tools.coding import coding_tools
    from toolwire.tools.sandbox import Sandbox

    differ = Differ(rec, workdir)
    sandbox = Sandbox(args.sandbox)
    tools = [] if rec.context.get("tools") == "none" else coding_tools(
        workdir, answer=_answers(rec), sandbox=sandbox,
        test_command=rec.context.get("test_command"), allow_network=args.network)
    with Emulator([t.reply for t in rec.turns]) as emu, \
            tempfile.TemporaryDirectory(prefix="toolwire-replay-") as scratch:
        model = client.model(f"{provider_for(wire)}:replay@{emu.base_url}", env={})
        agent = Agent(model=Player(model, differ), tools=tools, system=rec.system,
                      max_turns=len(rec.turns) + 1, approval="ask", approve=_approver(differ),
                      on_event=differ.on_event, cache=False, compaction=None)
        asyncio.run(_play(agent, rec, Path(scratch) / "replay.jsonl"))
        asyncio.run(model.aclose())
    return _report(args, rec, differ, changed, wire, workdir)


def _report(args: argparse.Namespace, rec: Recording, differ: Differ,
            changed: dict[str, tuple[str | None, str | None]], wire: str,
            workdir: Path) -> int:
    if differ.first is None:
        place = getattr(args, "shown_folder", None) or workdir
        print(f"replayed {len(differ.replies)} turn(s) of {args.log} in the {wire} wire, in "
              f"{place}: all {differ.compared} tool result(s) are as recorded")
        return EXIT_OK
    turn, pos, call, recorded, result = differ.first
    where = str(rec.context.get("workdir") or "")
    print(f"turn {turn}, call {pos + 1}: {visible(call.name)} "
          f"{visible(call.arguments_text)[:200]}")
    if recorded is None:
        print("  this call was not in the recording")
    else:
        print(neutral("".join(difflib.unified_diff(
            (_shown(recorded, workdir, where) + "\n").splitlines(keepends=True),
            (_shown(result, workdir, where) + "\n").splitlines(keepends=True),
            fromfile="recorded", tofile="replayed")).rstrip("\n")))
    if rec.files is None:
        print("the recording holds no hashes of the files at the start (run logs keep them "
              "from format 8 on), so it cannot tell a changed file from a changed tool")
    elif changed:
        for path, (was, now) in sorted(changed.items()):
            now_shown = now if now and now.startswith("not read") else (now or "no file")[:12]
            print(f"this file was different at the start: {path} (recorded "
                  f"{(was or 'no file')[:12]}, now {now_shown})")
    else:
        print(f"the {len(rec.files)} file(s) the tools touched were as recorded at the start: "
              "the tool now behaves differently")
    print(f"replay stopped at the first differing result ({args.log}, {wire} wire)",
          file=sys.stderr)
    return EXIT_PROBLEM


def add_command(sub: Any, epilog: str) -> None:
    from toolwire.tools.sandbox import SANDBOX_MODES

    p = sub.add_parser(
        "replay", epilog=epilog, help="play a recorded run again, its tools for real",
        description="Play the run recorded in LOG (a run log or a cassette) again: the model's "
                    "turns are answered from the recording by the provider emulator, every tool "
                    "runs for real, and each result is compared with the recorded one. The "
                    "first that differs is shown as a diff, saying whether a file the tools "
                    "touched was different at the start or the tool now behaves differently "
                    "(exit 1); exit 0 when every result is as recorded. A conversation "
                    "`toolwire proxy --record` wrote has its model side played: each recorded "
                    "request sent again, the client's tool results as recorded, each reply read "
                    "back compared with the recorded one.")
    p.add_argument("log", metavar="LOG", help="a run log or a cassette")
    p.add_argument("--workdir", metavar="DIR",
                   help="the folder the tools run in (default: a copy of the recorded one, "
                        "without its .toolwire folder, removed afterwards)")
    p.add_argument("--in-place", action="store_true",
                   help="run the tools in the recorded folder itself (files that differ from "
                        "the recording are named first, and must be confirmed)")
    p.add_argument("--wire", choices=WIRES, metavar="WIRE",
                   help="answer in this wire instead of the recorded one: " + ", ".join(WIRES))
    p.add_argument("--sandbox", choices=SANDBOX_MODES,
                   help="where run_command and run_tests run (default: as recorded in your own "
                        "unchanged run log, else auto)")
    trust.add_trust_option(p)
    p.set_defaults(func=cmd_replay)
