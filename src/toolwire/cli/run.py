"""The command line's agent commands: ``run``, ``resume`` and ``demo``.

Owns the terminal side of a run: the live status line, streamed text, approval prompts, the
``ask_user`` prompt, and the closing summary. The loop, the tools and the model are library
calls; nothing here decides anything a library user could not.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from toolwire.codecs import WIRES
from toolwire.errors import ConfigError
from toolwire.http.providers import provider_for

DEMO_TASK = "The tests in this project fail. Find out why and fix it."
DEMO_WIRES = {wire: provider_for(wire) for wire in WIRES}  # wire -> provider at the emulator


class Terminal:
    """Status line, streamed text and prompts on a terminal (plain lines when not a TTY)."""

    def __init__(self, out: TextIO = sys.stdout, err: TextIO = sys.stderr,
                 interactive: bool | None = None) -> None:
        self.out, self.err = out, err
        self.live = err.isatty()
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        self.turn = 0
        self.tokens = 0
        self.activity = "waiting for the model"
        self._streamed = False
        self.answer_shown = False
        self.running: set[str] = set()

    def status(self) -> None:
        if self.live:
            line = f"turn {self.turn} · {self.activity} · {self.tokens:,} tokens"
            self.err.write("\r\x1b[2K" + line[: shutil.get_terminal_size().columns - 1])
            self.err.flush()

    def clear(self) -> None:
        if self.live:
            self.err.write("\r\x1b[2K")
            self.err.flush()

    def say(self, text: str) -> None:
        self.clear()
        print(text, file=self.out, flush=True)
        self.status()

    def on_event(self, event: object) -> None:
        from toolwire.events import (
            RetryEvent,
            TextDelta,
            ToolCallStarted,
            ToolFinished,
            ToolStarted,
        )

        if isinstance(event, ToolStarted):
            self.turn = event.turn
            self.running.add(event.call.id)
            self.activity = f"running {event.call.name}"
            self.status()
        elif isinstance(event, ToolFinished):
            self.running.discard(event.call.id)
            self.activity = "running tools" if self.running else "waiting for the model"
            self.status()
        elif isinstance(event, TextDelta):
            if not self._streamed:
                self.clear()
            self._streamed = True
            self.out.write(event.text)
            self.out.flush()
        elif isinstance(event, ToolCallStarted):
            self.activity = f"model is writing a call to {event.name}"
            self.status()
        elif isinstance(event, RetryEvent):
            self.say(f"[retry] {event.error} (attempt {event.attempt}; waiting "
                     f"{event.wait:.1f} s)")

    def end_stream(self) -> bool:
        was, self._streamed = self._streamed, False
        if was:
            self.out.write("\n")
        return was

    def ask(self, prompt: str) -> str:
        self.clear()
        try:
            return input(prompt)
        except EOFError:
            return ""


def _approver(term: Terminal) -> Any:
    from toolwire.agent.dispatch import Approval

    def approve(req: Any) -> Any:
        if not term.interactive:
            return Approval.deny("no one was at the terminal to approve it; run with "
                                 "--approve auto to allow it")
        args = json.dumps(req.arguments, ensure_ascii=False)
        answer = term.ask(f"\nallow {req.call.name} {args[:300]}? [y/N/reason] ").strip()
        if answer.lower() in ("y", "yes"):
            return Approval.allow()
        reason = None if answer.lower() in ("", "n", "no") else answer
        return Approval.deny(reason)

    return approve


def _answerer(term: Terminal) -> Any:
    if not term.interactive:
        return None

    def answer(question: str, choices: Sequence[str] | None) -> str:
        hint = f" ({' / '.join(choices)})" if choices else ""
        return term.ask(f"\nthe model asks: {question}{hint}\n> ")

    return answer


def _policy(mode: str) -> Any:
    from toolwire.tools.coding import NEEDS_APPROVAL

    if mode == "auto":
        return "allow"
    value = "ask" if mode == "ask" else "deny"
    return {name: value for name in NEEDS_APPROVAL}


def _describe_step(step: Any, term: Terminal, *, show_text: bool) -> None:
    streamed = term.end_stream()
    reply = step.reply
    term.answer_shown = streamed and not reply.tool_calls
    term.turn = step.turn
    term.tokens = step.usage.total_tokens
    if reply.text and show_text and not streamed and reply.tool_calls:
        term.say(f"model: {reply.text}")
    for call, result in zip(reply.tool_calls, step.results, strict=False):
        args = call.arguments_text
        term.say(f"  → {call.name} {args[:200]}")
        mark = "error" if result.is_error else "ok"
        first = result.content.strip("\n").rstrip().splitlines()[:6]
        shown = "\n".join("      " + line[:160] for line in first)
        term.say(f"  ← {mark} ({len(result.content)} chars)\n{shown}")
    term.activity = "waiting for the model"
    term.status()


async def drive(agent: Any, task: str | None, term: Terminal, *, resume: str | None = None,
                log: str | None = None) -> Any:
    """Run (or resume) an agent, narrating each step; return its `RunResult`."""
    if resume is not None:
        result = await agent.aresume(resume)
        return result
    run = agent.steps(task, log=log)
    async with run:
        async for step in run:
            _describe_step(step, term, show_text=True)
    return run.result


def _finish(result: Any, term: Terminal, as_json: bool, log: str | None) -> int:
    term.clear()
    if as_json:
        from toolwire.transcript_json import to_json

        print(json.dumps({"stop": str(result.stop), "answer": result.answer,
                          "turns": result.turns, "usage": to_json(result.usage),
                          "notes": list(result.notes), "log": log,
                          "error": str(result.error) if result.error else None}, indent=2))
    else:
        if result.answer and not term.answer_shown:
            print(f"\n{result.answer}")
        print(f"\nstopped: {result.stop} after {result.turns} turn(s), "
              f"{result.usage.total_tokens:,} tokens" + (f"; log: {log}" if log else ""),
              file=sys.stderr)
        if result.error:
            print(f"error: {result.error}", file=sys.stderr)
        for note in result.notes:
            print(f"note: {note}", file=sys.stderr)
    return 0 if result.ok else 1


def _default_log(workdir: Path) -> str:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    folder = workdir / ".toolwire" / "runs"
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / f"{stamp}.jsonl")


def _agent(args: argparse.Namespace, model: Any, workdir: Path, term: Terminal,
           test_command: str | None = None) -> Any:
    from toolwire.agent.loop import Agent
    from toolwire.tools.coding import coding_tools

    tools = (coding_tools(workdir, answer=_answerer(term), test_command=test_command)
             if args.tools == "coding" else [])
    if getattr(args, "mcp", None):
        from toolwire.mcp import open_servers

        servers = open_servers(args.mcp, reserved=[t.name for t in tools], cwd=str(workdir))
        args.mcp_servers = servers  # closed by the command when the run ends
        for note in servers.notes:
            print(f"mcp: {note}", file=sys.stderr)
        tools = [*tools, *servers.tools]
    return Agent(model=model, tools=tools, max_turns=args.max_turns, approval=_policy(args.approve),
                 approve=_approver(term), stream=args.stream, on_event=term.on_event,
                 system=("You are a careful software engineer working in the project folder "
                         "you were given. Use the tools to inspect and change it. When you are "
                         "done, say what you found and what you changed."))


def _close_mcp(args: argparse.Namespace) -> None:
    servers = getattr(args, "mcp_servers", None)
    if servers is not None:
        servers.close()


def cmd_run(args: argparse.Namespace) -> int:
    from toolwire.http import client
    workdir = Path(args.workdir).resolve()
    if not workdir.is_dir():
        raise ConfigError(f"--workdir {args.workdir} is not a folder; give an existing folder")
    model = client.model(args.model)
    term = Terminal(out=sys.stderr if args.json else sys.stdout)
    log = args.log or _default_log(workdir)
    agent = _agent(args, model, workdir, term)

    async def go() -> Any:
        try:
            return await drive(agent, args.task, term, log=log)
        finally:
            await model.aclose()

    try:
        return _finish(asyncio.run(go()), term, args.json, log)
    finally:
        _close_mcp(args)


def cmd_resume(args: argparse.Namespace) -> int:
    from toolwire.agent.runlog import read_log
    from toolwire.http import client

    logged = read_log(args.log)
    model_id = args.model or logged.header.get("model")
    if not model_id:
        raise ConfigError(f"{args.log} does not name its model; give --model ID")
    model = client.model(model_id)
    term = Terminal(out=sys.stderr if args.json else sys.stdout)
    agent = _agent(args, model, Path(args.workdir).resolve(), term)

    async def go() -> Any:
        try:
            return await drive(agent, None, term, resume=args.log)
        finally:
            await model.aclose()

    try:
        return _finish(asyncio.run(go()), term, args.json, args.log)
    finally:
        _close_mcp(args)


DEMO_TEST_COMMAND = (f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {shlex.quote(sys.executable)} -m pytest "
                     "-q -p no:cacheprovider")


def _pytest(workdir: Path) -> tuple[int, str]:
    proc = subprocess.run(DEMO_TEST_COMMAND, shell=True, cwd=workdir, capture_output=True,
                          text=True, timeout=300)
    lines = [ln for ln in proc.stdout.strip().splitlines() if ln.strip()]
    return proc.returncode, (lines[-1] if lines else "(no output)")


def demo_project(dest: Path) -> Path:
    """Copy the bundled demo project (whose tests fail) into ``dest``."""
    source = resources.files("toolwire") / "demo" / "project"
    dest.mkdir(parents=True, exist_ok=True)
    for item in source.iterdir():
        if item.is_file() and item.name.endswith((".py", ".md")):
            (dest / item.name).write_text(item.read_text(encoding="utf-8"), encoding="utf-8")
    return dest


def cmd_demo(args: argparse.Namespace) -> int:
    from toolwire.emulator import Emulator
    from toolwire.emulator.script import load_script
    from toolwire.http import client

    probe = subprocess.run([sys.executable, "-c", "import pytest"], capture_output=True)
    if probe.returncode != 0:
        raise ConfigError("the demo project's tests run with pytest, which is not installed: "
                          "pip install 'toolwire[demo]' (or pip install pytest)")
    workdir = Path(args.workdir).resolve() if args.workdir else Path(
        tempfile.mkdtemp(prefix="toolwire-demo-"))
    demo_project(workdir)
    script_name = "recover.json" if args.scenario == "recover" else "script.json"
    term = Terminal(interactive=False)
    before, before_line = _pytest(workdir)
    print(f"workspace: {workdir}")
    print(f"tests before: {before_line}")
    emulator = None
    if args.model:
        model = client.model(args.model)
        print(f"model: {args.model} (live)")
    else:
        script = load_script(Path(str(resources.files("toolwire") / "demo" / script_name)))
        emulator = Emulator(script).start()
        model = client.model(f"{DEMO_WIRES[args.wire]}:scripted-demo@{emulator.base_url}",
                             env={})
        print(f"model: the model's replies are replayed from a script ({script_name}) by the "
              f"provider emulator at {emulator.base_url}, in the {args.wire} wire; every tool "
              "runs for real")
    print(f"task: {DEMO_TASK}\n")
    args.tools, args.approve = "coding", "auto"
    if args.scenario == "recover":
        args.stream = True  # broken argument JSON reaches a harness through a stream
    agent = _agent(args, model, workdir, term, test_command=DEMO_TEST_COMMAND)
    log = _default_log(workdir)

    async def go() -> Any:
        try:
            return await drive(agent, DEMO_TASK, term, log=log)
        finally:
            await model.aclose()

    try:
        result = asyncio.run(go())
    finally:
        if emulator is not None:
            emulator.stop()
    after, after_line = _pytest(workdir)
    code = _finish(result, term, False, log)
    print(f"\ntests before: {before_line}\ntests after:  {after_line}")
    if before != 0 and after == 0:
        print("the agent fixed the project: its tests failed before and pass now")
        return code
    print("the project's tests still fail")
    return 1


def add_commands(sub: Any, epilog: str) -> None:
    from toolwire.http.endpoints import MODEL_ID_FORMS

    forms = "; ".join(MODEL_ID_FORMS)

    def agent_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--workdir", default=".", metavar="DIR",
                       help="the folder the tools work in (default: the current folder)")
        p.add_argument("--tools", choices=("coding", "none"), default="coding",
                       help="built-in tools: coding (files, commands, tests, ask_user) or none")
        p.add_argument("--approve", choices=("ask", "auto", "never"), default="ask",
                       help="run_command, write_file and edit_file: ask first (default), allow "
                            "(auto) or refuse (never)")
        p.add_argument("--max-turns", type=int, default=50, metavar="N",
                       help="stop after N model calls (default 50)")
        p.add_argument("--stream", action="store_true", help="stream the model's replies")
        p.add_argument("--json", action="store_true", help="print the result as JSON")
        p.add_argument("--mcp", action="append", metavar="SERVER", default=[],
                       help="also use the tools of an MCP server: a command line such as "
                            "'python -m some_server', or a URL such as "
                            "http://127.0.0.1:PORT/mcp (repeatable; needs toolwire[mcp])")

    p = sub.add_parser(
        "run", epilog=epilog, help="run the agent on a task",
        description="Run the agent on TASK with the built-in coding tools in --workdir. A live "
                    "status line shows the turn, the tool running and the tokens so far. Tools "
                    "that change things ask before running. The run log is always written "
                    "(default: WORKDIR/.toolwire/runs/); `toolwire resume LOG` continues it.")
    p.add_argument("task", metavar="TASK")
    p.add_argument("--model", required=True, metavar="ID", help=f"model id: {forms}")
    p.add_argument("--log", metavar="FILE", help="where to write the run log")
    agent_options(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "resume", epilog=epilog, help="continue a run from its log",
        description="Continue the run recorded in LOG. Calls that were made but never "
                    "answered get a result: re-run if the tool is idempotent, else an error "
                    "saying the run was interrupted.")
    p.add_argument("log", metavar="LOG")
    p.add_argument("--model", metavar="ID", help="model id (default: the one in the log)")
    agent_options(p)
    p.set_defaults(func=cmd_resume)

    p = sub.add_parser(
        "demo", epilog=epilog, help="watch the agent fix a small project, no key needed",
        description="Copy a small Python project whose tests fail into a temporary folder and "
                    "run the agent on it. The model's replies are replayed from a bundled "
                    "script by the provider emulator over loopback HTTP, in any wire; every "
                    "tool runs for real. `demo recover` replays bad calls (an unknown tool, a "
                    "wrong type, an unknown field, broken JSON) and shows each error going "
                    "back and the next call fixing it. --model runs the task on a real model.")
    p.add_argument("scenario", nargs="?", choices=("fix", "recover"), default="fix",
                   help="fix (default) or recover")
    p.add_argument("--wire", choices=tuple(DEMO_WIRES), default=WIRES[0],
                   help="the wire the emulator speaks (default anthropic-messages)")
    p.add_argument("--model", metavar="ID", help=f"run on a real model instead: {forms}")
    p.add_argument("--workdir", metavar="DIR", help="where to copy the project (default: a "
                   "new temporary folder)")
    p.add_argument("--max-turns", type=int, default=20, metavar="N", help=argparse.SUPPRESS)
    p.set_defaults(mcp=[])
    p.add_argument("--stream", action="store_true", help="stream the model's replies")
    p.set_defaults(func=cmd_demo)

    from toolwire.mcp.cli import add_serve_arguments, serve_from_args

    p = sub.add_parser(
        "mcp-serve", epilog=epilog, help="serve toolwire tools to MCP clients",
        description="Expose toolwire tools as a Model Context Protocol server, over stdio or "
                    "streamable HTTP, with the same schemas, validation messages and workspace "
                    "confinement: a list of tools named MODULE:ATTR, or the built-in coding "
                    "tools with --builtin coding --workdir DIR. Needs toolwire[mcp].")
    add_serve_arguments(p)
    p.set_defaults(func=serve_from_args)
