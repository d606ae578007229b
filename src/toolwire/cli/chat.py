"""The ``chat`` command: a multi-turn session at the terminal, each line continuing one run.

Owns `cmd_chat`, the session's own commands (``/exit``, ``/undo``, ``/log``) and its parser.
The first line starts a run with the same tools, approvals and run log as ``toolwire run``;
each next line goes on from the log (`toolwire.agent.loop.Agent.aresume` with ``message``), so
the log resumes like any run, here with ``--resume`` or with ``toolwire resume``. ``/undo``
drops the last turn from the history (a ``compact`` line whose ``how`` is ``undo``) and puts
back what the built-in file tools changed in it (`toolwire.tools.journal.FileJournal`); what
``run_command`` did is not reverted, and it says so. Uses the run commands' pieces
(`toolwire.cli.run`); nothing below imports it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from toolwire.cli import chains, checks, settings, trust
from toolwire.cli.common import EXIT_OK, UserError
from toolwire.cli.run import (
    Outputs,
    _agent,
    _close_mcp,
    _default_log,
    _terminal,
    agent_options,
    check_agent_options,
    from_log,
    protected,
)
from toolwire.cli.terminal import Terminal, finish

PROMPT = "you> "
HELP = ("type a message for the model; /undo drops the last turn and puts back the files the "
        "file tools changed in it; /log shows where the run log is; /exit (or Ctrl-D) ends")


def _undo(log: str, journal: Any, term: Terminal) -> None:
    """Drop the last turn from the run's history and put back what the file tools changed."""
    from toolwire.agent.runlog import RunLog, read_log
    from toolwire.events import Compacted

    messages = read_log(log).messages
    lines = [i for i, m in enumerate(messages) if m.role == "user" and not m.tool_results]
    if not lines:
        term.say("nothing to undo yet")
        return
    keep = messages[:lines[-1]]
    with RunLog(log) as writer:
        writer(Compacted(how="undo", why="the user undid the last turn", before=len(messages),
                         after=len(keep), messages=tuple(keep)))
    restored = journal.undo()
    files = ", ".join(restored) if restored else "none"
    term.say(f"undid the last turn ({len(messages) - len(keep)} message(s) dropped); files put "
             f"back: {files}. What run_command did in it is not reverted.")


def _read(term: Terminal) -> str | None:
    """The next line, or None at the end of input."""
    term.clear()
    try:
        return input(PROMPT)
    except EOFError:
        return None


async def _session(args: argparse.Namespace, agent: Any, model: Any, log: str, journal: Any,
                   term: Terminal, started: bool) -> None:
    try:
        while True:
            line = await asyncio.to_thread(_read, term)
            if line is None or line.strip() == "/exit":
                return
            text = line.strip()
            if not text:
                continue
            if text == "/log":
                term.say(f"run log: {log} (toolwire resume {log}, or chat --resume {log})")
            elif text == "/undo":
                _undo(log, journal, term)
            elif text.startswith("/"):
                term.say(f"unknown command {text.split()[0]}; {HELP}")
            else:
                journal.mark()
                if started:
                    result = await agent.aresume(log, message=text)
                else:
                    result = await agent.arun(text, log=log)
                    started = True
                finish(result, term, args.json, log)
                term.answer_shown, term.last_text = False, None
    finally:
        await model.aclose()


def cmd_chat(args: argparse.Namespace) -> int:
    from toolwire.agent.runlog import read_log
    from toolwire.http import client
    from toolwire.tools.files import Workspace
    from toolwire.tools.journal import FileJournal

    if args.resume and args.log:
        raise UserError("give --resume LOG or --log FILE, not both: a resumed chat writes on "
                        "in its own log")
    if args.resume:
        checks.read_text(args.resume, "--resume")
        if args.workdir is not None:
            checks.workdir(args.workdir)
        workdir = from_log(args, args.resume, read_log(args.resume), "chat")
    else:
        workdir = checks.workdir(args.workdir or ".")
        args.tools = args.tools or "coding"
        settings.apply(args)
        check_agent_options(args)
        args.protect = trust.record_place(args, workdir, [("--log", args.log)])
    outputs = Outputs()
    protected(args, outputs)
    if args.resume:
        log = args.resume
    elif args.log:
        log = str(outputs.file(checks.output_path(args.log, "--log", fresh=True)))
    else:
        log = None
    model = chains.chained(args, client.model(args.model, limits=settings.limits(args)))
    term = _terminal(args)
    journal = FileJournal(Workspace(workdir))
    try:
        agent = _agent(args, model, workdir, term, journal=journal)
    except BaseException:
        asyncio.run(model.aclose())
        outputs.remove()
        _close_mcp(args)
        raise
    log = log or _default_log(workdir, outputs)
    print(f"toolwire chat in {workdir}; {HELP}", file=sys.stderr)
    try:
        asyncio.run(_session(args, agent, model, log, journal, term, bool(args.resume)))
    finally:
        _close_mcp(args)
        if not Path(log).exists() or Path(log).stat().st_size == 0:
            outputs.remove()  # nothing was said: nothing is left behind
    return EXIT_OK


def add_command(sub: Any, epilog: str) -> None:
    from toolwire.http.endpoints import MODEL_ID_FORMS

    p = sub.add_parser(
        "chat", epilog=epilog, help="talk with the agent, turn by turn, with the same tools",
        description="An interactive session: each line you type continues one run, with the "
                    "built-in tools, approvals and run log of `toolwire run`. /undo drops the "
                    "last turn and puts back what edit_file and write_file changed in it "
                    "(run_command's effects are not reverted); /log shows the run "
                    "log; /exit or Ctrl-D ends. The log resumes like any run: chat --resume LOG "
                    "goes on talking, toolwire resume LOG finishes an interrupted turn.")
    p.add_argument("--model", metavar="ID", help=f"model id: {'; '.join(MODEL_ID_FORMS)} "
                   "(default: TOOLWIRE_MODEL, or model in the config file)")
    p.add_argument("--resume", metavar="LOG",
                   help="go on with the run in LOG (its model, folder and tools unless given; "
                        "its approval policy and sandbox too when it is your own unchanged "
                        "log)")
    trust.add_trust_option(p)
    p.add_argument("--log", metavar="FILE", help="where to write the run log (a new file)")
    p.add_argument("--system", metavar="TEXT",
                   help="the system prompt (default: one for working on a software project)")
    p.add_argument("--temperature", type=checks.temperature, metavar="T",
                   help="sampling temperature, 0 or more (default: the provider's)")
    agent_options(p)
    p.set_defaults(func=cmd_chat)
