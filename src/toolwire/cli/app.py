"""The ``toolwire`` command line. Thin: every command is a few library calls.

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
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from toolwire.cli import checks, trust
from toolwire.cli.common import (
    EPILOG,
    EXIT_CLOSED_PIPE,
    EXIT_OK,
    EXIT_PROBLEM,
    EXIT_USAGE,
    UserError,
    for_people,
    one_line,
    report_crash,
)
from toolwire.cli.otel import traced
from toolwire.escapes import json_safe, neutral, visible
from toolwire.secrets import Redactor, redact, redact_json


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    hide = Redactor()  # what a log holds, on a terminal: no secret, no escape sequence
    if getattr(args, "json", False):
        print(for_people(json_safe(json.dumps(redact_json(data, hide), indent=2,
                                              ensure_ascii=False))))
    else:
        print(for_people(neutral(hide(text))))


@contextlib.contextmanager
def _shape_of(path: str) -> Iterator[None]:
    """A value of the wrong type somewhere in a file a command reads is the file's fault: one
    message naming the file (the readers below check most shapes themselves)."""
    try:
        yield
    except (TypeError, AttributeError, KeyError, IndexError) as exc:
        raise UserError(f"{path} holds a value of the wrong type where its format wants "
                        f"another ({type(exc).__name__}: {exc}); check the file") from None


# ------------------------------------------------------------------------------- commands


def cmd_explain(args: argparse.Namespace) -> int:
    from toolwire.explain.build import explain_file, render_text
    from toolwire.transcript_json import to_json

    checks.read_text(args.file, event_stream=True)
    html = checks.output_path(args.html, "--html", fresh=True) if args.html else None
    with _shape_of(args.file):
        expl = explain_file(args.file)
    record = _record_standing(args.file)
    if html is not None:
        from toolwire.explain.html import render_html

        page = render_html(expl, title=f"toolwire: {Path(args.file).name}")
        html.write_text(for_people(redact(page)), encoding="utf-8")
        print(f"wrote {args.html}", file=sys.stderr)
    data = {
        "source": expl.source, "wire": expl.wire, "stop": expl.stop,
        "stop_meaning": expl.stop_meaning,
        "entries": [{"index": e.index, "lane": e.lane, "label": e.label, "summary": e.summary,
                     "call_id": e.call_id, "answers": e.answers, "is_error": e.is_error,
                     "media": [{"kind": m.kind, "media_type": m.media_type, "size": m.size,
                                "name": m.name, "url": m.url} for m in e.media]}
                    for e in expl.entries],
        "usage_per_turn": [to_json(u) for u in expl.turn_usage],
        "models": expl.models,
        "record": record,
    }
    text = render_text(expl)
    _emit(args, data, text if record is None else f"record: {record['says']}\n{text}")
    return EXIT_OK


def _record_standing(path: str) -> dict[str, Any] | None:
    """What the signatures of a run log or cassette say (None for a body in a wire)."""
    record = trust.standing(path)
    return None if record is None else {"standing": record.verdict.standing,
                                         "says": record.describe()}


def _log_request(path: str) -> Any:
    """The conversation of a run log as a `Request`: its system prompt, tools and messages."""
    from toolwire.agent.runlog import read_log
    from toolwire.transcript import Request, ToolSpec
    from toolwire.transcript_json import from_json

    run = read_log(path)
    header = run.header
    tools = tuple(from_json(t) for t in header.get("tools") or ())
    specs = tuple(t for t in tools if isinstance(t, ToolSpec))
    if len(specs) != len(tools):
        raise UserError(f"{path}: the header's tools are not tool definitions")
    model = header.get("request_model") or header.get("model") or "model"
    return Request(model=str(model), system=header.get("system"), tools=specs,
                   messages=tuple(run.messages))


def _check_source(path: str, body: Any, source: str) -> None:
    """Refuse a --from that reads the body as another wire would not: it would lose content."""
    from toolwire.codecs import get_codec
    from toolwire.conversion import detect_wire
    from toolwire.errors import WireFormatError

    try:
        with _shape_of(path):
            detected, kind = detect_wire(body)
    except WireFormatError:
        return  # no wire claims it: the person's word stands
    if kind != "request" or detected == source:
        return
    with _shape_of(path):
        theirs = get_codec(detected).decode_request(body)
    try:
        mine = get_codec(source).decode_request(body)
    except (KeyError, TypeError, ValueError, AttributeError):
        mine = None
    if mine is None or mine.messages != theirs.messages or mine.tools != theirs.tools:
        raise UserError(f"{path} is a {detected} request; read as {source} it would lose part "
                        f"of the conversation. Give --from {detected}, or leave --from out to "
                        "detect the wire")


def _captured_stream(path: str) -> tuple[str, Any] | None:
    """The wire and reply of a captured binary AWS event stream (a ConverseStream body, or an
    InvokeModel stream whose chunks hold Anthropic events), or None when ``path`` holds
    something else. A stream whose frames fail their checksums or break off, or that carries
    the provider's error, is a `UserError`."""
    from toolwire.codecs import get_codec
    from toolwire.codecs.eventstream import is_event_stream
    from toolwire.conversion import detect_wire
    from toolwire.errors import ToolwireError
    from toolwire.events import StreamEnd

    checks.read_text(path, event_stream=True)
    raw = Path(path).read_bytes()
    if not is_event_stream(raw):
        return None
    try:
        try:
            wire, _ = detect_wire(raw)
        except ToolwireError:  # InvokeModel's chunks: each holds one event of the wire's own
            from toolwire.http.cloud import InvokeChunks

            unwrap = InvokeChunks()
            raw = unwrap.feed(raw) + unwrap.close()
            wire, _ = detect_wire(raw)
        ends = [e for e in get_codec(wire).decode_stream([raw]) if isinstance(e, StreamEnd)]
    except ToolwireError as exc:
        raise UserError(f"{path} is an AWS event stream that cannot be read: {one_line(exc)}; "
                        "give the whole captured body, as the server sent it") from None
    return wire, ends[-1].reply


def cmd_convert(args: argparse.Namespace) -> int:
    from toolwire.agent.runlog import is_log_text
    from toolwire.codecs import get_codec
    from toolwire.conversion import convert, detect_wire

    captured = _captured_stream(args.file)
    if captured is not None:  # a reply: written as the target wire writes its replies
        wire, reply = captured
        if args.source is not None and args.source != wire:
            raise UserError(f"{args.file} is a {wire} stream, not {args.source}")
        print(f"converted {wire} stream -> {args.to} reply", file=sys.stderr)
        body = get_codec(args.to).encode_response(reply)
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return EXIT_OK
    text = checks.read_text(args.file)
    if is_log_text(text):
        request = _log_request(args.file)
        encoded = get_codec(args.to).encode(request)
        source, body, losses = "run log", encoded.body, encoded.notes
    else:
        data = checks.read_json(args.file)
        source = args.source
        if source is None:
            with _shape_of(args.file):
                source, kind = detect_wire(data)
            if kind != "request":
                raise UserError(f"{args.file} is a {source} {kind}, not a request; convert takes "
                                "a request body (a whole conversation) or a run log")
        else:
            _check_source(args.file, data, source)
        with _shape_of(args.file):
            result = convert(data, source, args.to)
        body, losses = result.body, result.losses
    for loss in losses:
        print(f"loss: {loss}", file=sys.stderr)
    if not losses:
        print(f"converted {source} -> {args.to} with nothing lost", file=sys.stderr)
    print(json.dumps(body, indent=2, ensure_ascii=False))
    return EXIT_OK


def _messages_from(path: str) -> tuple[list[Any], str | None, Any]:
    """The canonical messages in a file (a request body in any wire, or a run log), its wire
    and the body (None for a run log)."""
    from toolwire.agent.runlog import is_log_text, read_log
    from toolwire.codecs import get_codec
    from toolwire.conversion import detect_wire
    from toolwire.errors import WireFormatError

    if is_log_text(checks.read_text(path)):
        return list(read_log(path).messages), None, None
    body = checks.read_json(path)
    with _shape_of(path):
        wire, kind = detect_wire(body)
    if kind != "request":
        raise UserError(f"{path} is a {wire} {kind}; check takes a request body or a run log")
    try:
        with _shape_of(path):
            return list(get_codec(wire).decode_request(body).messages), wire, body
    except WireFormatError:
        with _shape_of(path):
            if get_codec(wire).check_body(body):  # one the provider refuses: check says why
                return [], wire, body
        raise


def cmd_check(args: argparse.Namespace) -> int:
    from toolwire.rules import check_request, check_transcript

    captured = _captured_stream(args.file)
    detected: str | None
    if captured is not None:  # one reply, checked as the answer to a user's turn
        import dataclasses

        from toolwire.transcript import Message

        detected, reply = captured
        wire = args.wire or detected
        messages = [reply.message]
        problems = [dataclasses.replace(p, index=p.index - 1) for p in check_transcript(
            [Message.user("(the request)"), reply.message], wire)
            if p.rule != "missing_result"]  # its calls' results are still to come
    else:
        messages, detected, body = _messages_from(args.file)
        wire = args.wire or detected
        if body is not None and wire is not None and wire == detected:  # as the provider reads it
            with _shape_of(args.file):
                problems = check_request(body, wire)
        else:
            problems = check_transcript(messages, wire)
    data = {"wire": wire, "messages": len(messages),
            "problems": [{"index": p.index, "rule": p.rule, "severity": p.severity,
                          "message": p.message, "fix": p.fix} for p in problems]}
    if problems:
        text = "\n".join(str(p) for p in problems)
    else:
        text = f"{len(messages)} messages, no problems" + (f" for {wire}" if wire else "")
    _emit(args, data, text)
    return EXIT_PROBLEM if any(p.severity == "error" for p in problems) else EXIT_OK


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
    _emit(args, data, "\n".join(lines))
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
    p.set_defaults(func=cmd_explain)

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
    p.set_defaults(func=cmd_convert)

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
    p.set_defaults(func=cmd_check)

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
