"""The commands that read a file a run, a capture or a person left: ``explain`` (a run log,
as text or an HTML page), ``convert`` (a body or a run log's request into another wire) and
``check`` (a transcript or a body against the pairing and order rules), with what they share:
`emit` (JSON or text, redacted and safe for a terminal) and `shape_of` (a value of the wrong
type in a file, named as the file's fault). Imports what a command uses when it runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolwire.cli import checks, trust
from toolwire.cli.common import EXIT_OK, EXIT_PROBLEM, UserError, for_people, one_line
from toolwire.escapes import json_safe, neutral
from toolwire.secrets import Redactor, redact, redact_json


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    hide = Redactor()  # what a log holds, on a terminal: no secret, no escape sequence
    if getattr(args, "json", False):
        print(for_people(json_safe(json.dumps(redact_json(data, hide), indent=2,
                                              ensure_ascii=False))))
    else:
        print(for_people(neutral(hide(text))))


@contextlib.contextmanager
def shape_of(path: str) -> Iterator[None]:
    """A value of the wrong type somewhere in a file a command reads is the file's fault: one
    message naming the file (the readers below check most shapes themselves)."""
    try:
        yield
    except (TypeError, AttributeError, KeyError, IndexError) as exc:
        raise UserError(f"{path} holds a value of the wrong type where its format wants "
                        f"another ({type(exc).__name__}: {exc}); check the file") from None


def cmd_explain(args: argparse.Namespace) -> int:
    from toolwire.explain.build import explain_file, render_text
    from toolwire.transcript_json import to_json

    checks.read_text(args.file, event_stream=True)
    html = checks.output_path(args.html, "--html", fresh=True) if args.html else None
    with shape_of(args.file):
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
    emit(args, data, text if record is None else f"record: {record['says']}\n{text}")
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
        with shape_of(path):
            detected, kind = detect_wire(body)
    except WireFormatError:
        return  # no wire claims it: the person's word stands
    if kind != "request" or detected == source:
        return
    with shape_of(path):
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
            with shape_of(args.file):
                source, kind = detect_wire(data)
            if kind != "request":
                raise UserError(f"{args.file} is a {source} {kind}, not a request; convert takes "
                                "a request body (a whole conversation) or a run log")
        else:
            _check_source(args.file, data, source)
        with shape_of(args.file):
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
    with shape_of(path):
        wire, kind = detect_wire(body)
    if kind != "request":
        raise UserError(f"{path} is a {wire} {kind}; check takes a request body or a run log")
    try:
        with shape_of(path):
            return list(get_codec(wire).decode_request(body).messages), wire, body
    except WireFormatError:
        with shape_of(path):
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
            with shape_of(args.file):
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
    emit(args, data, text)
    return EXIT_PROBLEM if any(p.severity == "error" for p in problems) else EXIT_OK
