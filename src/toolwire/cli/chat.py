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
import contextlib
import sys
from pathlib import Path
from typing import Any

from toolwire.cli import chains, checks, settings, trust
from toolwire.cli.common import EXIT_OK, UserError
from toolwire.cli.interrupts import signals_to_the_main_thread
from toolwire.cli.options import AgentOptions, agent_options
from toolwire.cli.outputs import Outputs, default_log, protected
from toolwire.cli.run import _agent, _close_mcp, _terminal, check_agent_options, from_log
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
    changed = journal.changed_since()
    again = False
    if changed:
        answer = term.ask(f"changed since the turn ended (by you or another program): "
                          f"{', '.join(changed)}; put back as before the turn anyway, losing "
                          "those changes? [y/N] ")
        again = answer.strip().lower() in ("y", "yes")
    restored = journal.undo(changed_too=again)
    files = ", ".join(restored) if restored else "none"
    kept = [] if again else changed
    term.say(f"undid the last turn ({len(messages) - len(keep)} message(s) dropped); files put "
             f"back: {files}" + (f"; left as they are now: {', '.join(kept)}" if kept else "")
             + ". What run_command did in it is not reverted.")


RECAP_CHARS = 200


def recap(messages: list[Any]) -> list[str]:
    """The conversation so far, as a resumed chat shows it first: each line typed and each
    answer (shortened), and how many tool calls came between."""
    lines = ["so far:"]
    calls = 0
    for message in messages:
        text = " ".join(message.text.split())
        short = text if len(text) <= RECAP_CHARS else text[:RECAP_CHARS - 1] + "…"
        if message.role == "user" and not message.tool_results:
            lines.append(f"{PROMPT}{short}")
        elif message.role == "assistant":
            calls += len(message.tool_calls)
            if text and not message.tool_calls:
                if calls:
                    lines.append(f"  ({calls} tool call(s))")
                    calls = 0
                lines.append(f"model: {short}")
    if calls:
        lines.append(f"  ({calls} tool call(s), the last turn unfinished)")
    return lines if len(lines) > 1 else []


def _read(term: Terminal, keys: Any) -> str | None:
    """The next line, or None at the end of input or when the person leaves with Ctrl-C: on
    a line with text it clears the line, on an empty line (or pressed again) it leaves."""
    again = False
    while True:
        term.clear()
        keys.reset()
        try:
            with keys.ticking():
                return input(PROMPT)
        except EOFError:
            return None
        except KeyboardInterrupt:
            if again or keys.typed == "":
                print(file=sys.stderr)
                return None
            again = True
            print("\n(line cleared; Ctrl-C again or Ctrl-D leaves)", file=sys.stderr)


def _turn(loop: asyncio.AbstractEventLoop, work: Any) -> Any:
    """Run one turn on the session's event loop; Ctrl-C cancels it and is raised again."""
    task = loop.create_task(work)
    try:
        return loop.run_until_complete(task)
    except KeyboardInterrupt:
        task.cancel()
        with contextlib.suppress(BaseException):
            loop.run_until_complete(task)
        raise


def _session(opts: AgentOptions, agent: Any, loop: asyncio.AbstractEventLoop, log: str,
             journal: Any, term: Terminal, started: bool) -> None:
    from toolwire.cli.interrupts import interrupts

    with contextlib.suppress(ImportError):  # line editing, and the line's text at Ctrl-C
        import readline  # noqa: F401
    keys = interrupts()
    with keys.caught():
        while True:
            line = _read(term, keys)
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
                    result = _turn(loop, agent.aresume(log, message=text))
                else:
                    result = _turn(loop, agent.arun(text, log=log))
                    started = True
                journal.seal()
                finish(result, term, opts.json, log)
                term.answer_shown, term.last_text = False, None


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
        workdir, opts = from_log(args, args.resume, read_log(args.resume), "chat")
    else:
        workdir = checks.workdir(args.workdir or ".")
        args.tools = args.tools or "coding"
        settings.apply(args)
        opts = check_agent_options(args)
        opts.protect = trust.record_place(args, workdir, [("--log", args.log)])
    outputs = Outputs()
    protected(opts.protect, outputs)
    if args.resume:
        log = args.resume
    elif args.log:
        log = str(outputs.file(checks.output_path(args.log, "--log", fresh=True)))
    else:
        log = None
    model = chains.chained(args, client.model(opts.model_id, limits=settings.limits(args)))
    term = _terminal(opts)
    journal = FileJournal(Workspace(workdir))
    try:
        agent = _agent(opts, model, workdir, term, journal=journal)
    except BaseException:
        asyncio.run(model.aclose())
        outputs.remove()
        _close_mcp(opts)
        raise
    log = args.stop_log = log or default_log(workdir, outputs)
    print(f"toolwire chat in {workdir}; {HELP}", file=sys.stderr)
    if args.resume:
        for line in recap(read_log(args.resume).messages):
            term.say(line)
    loop = asyncio.new_event_loop()
    signals_to_the_main_thread(loop)
    try:
        _session(opts, agent, loop, log, journal, term, bool(args.resume))
    finally:
        loop.run_until_complete(model.aclose())
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
        _close_mcp(opts)
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
                    "log; /exit or Ctrl-D ends (Ctrl-C clears the line, and ends on an "
                    "empty line or when pressed twice). The log resumes like any run: "
                    "chat --resume LOG goes on talking, toolwire resume LOG finishes an "
                    "interrupted turn.")
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
