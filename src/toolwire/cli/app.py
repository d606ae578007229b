"""The ``toolwire`` command line. Thin: every command is a few library calls.

Here: the parser, `main`, ``emulate`` and ``config``; ``explain``, ``convert`` and ``check``
are `toolwire.cli.reading`'s.

Exit codes, for every command: 0 success; 1 the command ran and found a problem (``check``
found broken rules, a run ended without an answer); 2 bad usage or bad input (the message
names what was wrong and what to do); 3 an internal error, whose traceback goes to a file
(`toolwire.cli.common.report_crash`). User errors never print a traceback: every command
checks its arguments and files (`toolwire.cli.checks`) before doing anything. The wire choices
are the wire registry's (`toolwire.codecs.registry`), read when the parser is built. Must not
import a codec module, the transport or the agent at module level: commands import what they
use when they run.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path

from toolwire.cli import checks, reading
from toolwire.cli.common import (
    EPILOG,
    EXIT_CLOSED_PIPE,
    EXIT_OK,
    EXIT_PROBLEM,
    EXIT_USAGE,
    UserError,
    one_line,
    report_crash,
)
from toolwire.cli.otel import traced
from toolwire.escapes import visible
from toolwire.secrets import redact

# ------------------------------------------------------------------------------- commands


def cmd_emulate(args: argparse.Namespace) -> int:
    import asyncio

    from toolwire.emulator import Emulator
    from toolwire.emulator.script import load_script

    checks.read_json(args.script, "--script")
    checks.free_port(args.port)
    emu = Emulator(load_script(Path(args.script)), port=args.port)

    async def serve() -> None:
        await emu.astart()
        print(f"toolwire emulator listening on {emu.base_url} "
              f"({len(emu.unplayed)} scripted replies); Ctrl-C stops it", flush=True)
        try:
            while True:
                await asyncio.sleep(3600)
        finally:
            await emu.astop()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
    return EXIT_OK


def cmd_config(args: argparse.Namespace) -> int:
    from toolwire.cli import settings

    path = settings.config_path()
    found = settings.resolve({})
    data = {"config_file": str(path), "config_file_exists": path.exists(),
            "settings": {name: {"value": s.value, "from": s.source} for name, s in found.items()}}
    lines = [f"config file: {path}" + ("" if path.exists() else " (there is none)")]
    lines += [f"{name} = {s.value if s.value is not None else '-'}  (from {s.source})"
              for name, s in found.items()]
    problem = None
    model = found["model"]
    if model.value is not None:
        try:
            checks.model_id(model.value, model.source.removeprefix("the "))
        except UserError as exc:
            problem = str(exc)
            lines.append(f"problem: {problem}")
    data["problem"] = problem
    reading.emit(args, data, "\n".join(lines))
    return EXIT_OK if problem is None else EXIT_PROBLEM


# ------------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    from toolwire.codecs.registry import wire_names
    from toolwire.version import __version__

    wires = wire_names()
    parser = argparse.ArgumentParser(
        prog="toolwire",
        description="LLM tool calling done right on the wire: run agents, explain and convert "
                    "recorded conversations, emulate providers.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"toolwire {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    from toolwire.cli import batch as _cli_batch
    from toolwire.cli import chat as _cli_chat
    from toolwire.cli import demo as _cli_demo
    from toolwire.cli import mcpauth as _cli_mcpauth
    from toolwire.cli import proxy as _cli_proxy
    from toolwire.cli import replay as _cli_replay
    from toolwire.cli import run as _cli_run
    from toolwire.cli import runs as _cli_runs
    _cli_run.add_commands(sub, EPILOG)
    _cli_demo.add_command(sub, EPILOG)
    _cli_replay.add_command(sub, EPILOG)
    _cli_chat.add_command(sub, EPILOG)
    _cli_runs.add_command(sub, EPILOG)
    _cli_batch.add_commands(sub, EPILOG)
    _cli_proxy.add_command(sub, EPILOG)
    _cli_mcpauth.add_command(sub, EPILOG)

    p = sub.add_parser(
        "explain", epilog=EPILOG,
        help="name what every message in a run, cassette or body is doing",
        description="Print every message in the context with what it is doing (system prompt, "
                    "tool definitions, the task, assistant text, tool calls and the results "
                    "answering them, reasoning passed back, the final answer), what ended the "
                    "loop, and the tokens per turn. FILE is a run log, a cassette, or a request "
                    "or reply body (or raw stream) in any wire, detected.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--html", metavar="OUT", help="also write a self-contained HTML report")
    p.add_argument("--json", action="store_true", help="print the explanation as JSON")
    p.set_defaults(func=reading.cmd_explain)

    p = sub.add_parser(
        "convert", epilog=EPILOG,
        help="the same conversation in another wire format",
        description="Read a request body in one wire and print the same conversation as a "
                    "request in another. Everything that cannot carry over (reasoning of another "
                    "provider, ids rewritten, tool names mapped, schema keywords removed) is "
                    "listed on stderr. A captured binary AWS event stream (a Bedrock reply) "
                    "is printed as the reply body of the target wire.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--to", required=True, choices=wires, metavar="WIRE",
                   help="target wire: " + ", ".join(wires))
    p.add_argument("--from", dest="source", choices=wires, metavar="WIRE",
                   help="source wire (detected when left out)")
    p.set_defaults(func=reading.cmd_convert)

    p = sub.add_parser(
        "check", epilog=EPILOG,
        help="check a transcript against the rules the APIs enforce",
        description="Report every break of the pairing and ordering rules (a call with no "
                    "result, a result with no call, results out of place, duplicate ids) and, "
                    "with a wire, that wire's own rules. Exit 1 when an error is found.")
    p.add_argument("file", metavar="FILE", help="a request body in any wire, a run log, or a "
                   "captured AWS event stream (its reply's calls are checked)")
    p.add_argument("--wire", choices=wires, metavar="WIRE",
                   help="also check this wire's own rules (default: the detected wire)")
    p.add_argument("--json", action="store_true", help="print the problems as JSON")
    p.set_defaults(func=reading.cmd_check)

    p = sub.add_parser(
        "emulate", epilog=EPILOG,
        help="serve scripted replies in every wire over HTTP on 127.0.0.1",
        description="Start the provider emulator: an HTTP server on 127.0.0.1 speaking every "
                    "wire at its real path, checking each request as the provider does and "
                    "answering from a script of replies and faults.")
    p.add_argument("--script", required=True, metavar="FILE",
                   help='JSON: {"replies": [...]} of replies and faults')
    p.add_argument("--port", type=checks.port, default=0,
                   help="port (default: any free port)")
    p.set_defaults(func=cmd_emulate)

    p = sub.add_parser(
        "config", epilog=EPILOG, help="show the settings in effect and where each came from",
        description="Settings the agent commands use when their flag is not given: model "
                    "(TOOLWIRE_MODEL), approve (TOOLWIRE_APPROVE), sandbox (TOOLWIRE_SANDBOX) and "
                    "color (TOOLWIRE_COLOR; NO_COLOR turns colour off). A flag wins over the "
                    "environment, which wins over the config file: TOML at "
                    "$XDG_CONFIG_HOME/toolwire/config.toml (default ~/.config/toolwire/"
                    "config.toml; TOOLWIRE_CONFIG names another), with those keys, like "
                    'model = "anthropic:claude-sonnet-4-5".')
    p.add_argument("action", choices=("show",), help="show: print each setting, its value and "
                   "where it came from")
    p.add_argument("--json", action="store_true", help="print them as JSON")
    p.set_defaults(func=cmd_config)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` (default: this process's arguments); return its exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_USAGE
        return _command(args, argv)
    except BaseException as exc:
        if not _reader_left(exc):
            raise
        return _quiet_after_closed_pipe()


def _reader_left(exc: BaseException | None) -> bool:
    """Whether ``exc`` comes from writing to a pipe whose reader has gone (``| head``)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, BrokenPipeError):
            return True
        if isinstance(exc, BaseExceptionGroup):
            return any(_reader_left(inner) for inner in exc.exceptions)
        exc = exc.__cause__ or exc.__context__
    return False


def _quiet_after_closed_pipe() -> int:
    """End as ``git log | head`` does: nothing more is written (what is still buffered goes
    nowhere rather than failing at exit), and the exit code of a process ended by SIGPIPE."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            os.dup2(devnull, stream.fileno())
    os.close(devnull)
    return EXIT_CLOSED_PIPE


def _command(args: argparse.Namespace, argv: list[str]) -> int:
    from toolwire.errors import ToolwireError

    try:
        with traced(args):
            return int(args.func(args))
    except (UserError, ToolwireError) as exc:
        shown = visible(redact(one_line(exc)))  # it may quote what a server or a file held
        print(f"toolwire {args.command}: error: {shown}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        log = getattr(args, "stop_log", None)
        print("\nstopped (Ctrl-C)" + (f"; log: {log}; toolwire resume {log} continues it"
                                      if log else ""), file=sys.stderr)
        return 130
    except OSError as exc:
        if _reader_left(exc):
            raise
        if exc.filename is None:  # not about a path the person gave
            return report_crash(args.command, exc, argv)
        print(f"toolwire {args.command}: error: {exc.filename}: {exc.strerror or exc}",
              file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        if _reader_left(exc):
            raise
        return report_crash(args.command, exc, argv)
