"""A recorded run as ``toolwire replay`` plays it again: `Recording` (the model's replies, the
result each call got, the task and the user lines that followed each reply) and
`read_recording`, which reads one from a run log or a cassette and names what is wrong with a
file that is neither. Imports the readers of logs and cassettes when it runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolwire.cli import checks
from toolwire.cli.common import UserError


@dataclass(slots=True)
class Turn:
    """One recorded reply, the results its calls got (by call id) and the user lines that
    came after it (a chat's next lines)."""

    reply: Any
    then: list[Any] = field(default_factory=list)


@dataclass(slots=True)
class Recording:
    source: str
    task: list[Any] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)
    system: str | None = None
    wire: str | None = None
    context: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str | None] | None = None
    requests: list[Any] = field(default_factory=list)
    """A cassette's requests as recorded, one per turn (`toolwire.cli.replay_model`)."""
    written_by: str | None = None


def _user_line(message: Any) -> bool:
    return bool(message.role == "user" and not message.tool_results)


def read_recording(path: str) -> Recording:
    """A run log or a cassette as a `Recording`; a `UserError` for anything else."""
    from toolwire.agent.runlog import is_log_text

    text = checks.read_text(path)
    return _from_log(path, text) if is_log_text(text) else _from_cassette(path)


def _from_log(path: str, text: str) -> Recording:
    from toolwire.agent.runlog import read_log
    from toolwire.http.providers import get_provider
    from toolwire.mediafiles import MediaFiles, unfold_fields
    from toolwire.transcript import Message, Reply
    from toolwire.transcript_json import from_json

    logged = read_log(path)  # checks every line
    media = MediaFiles(Path(path))
    header = logged.header
    provider = get_provider(str(header.get("model") or "").partition(":")[0])
    rec = Recording(path, system=header.get("system"), results=dict(logged.results),
                    wire=provider.wire if provider else None, files=None,
                    context=header["context"] if isinstance(header.get("context"), dict) else {})
    rec.files = dict(logged.files) if int(header.get("format", 0)) >= 8 else None
    for line in text.split("\n"):  # as read_log splits: U+2028 in old logs is text
        try:
            event = json.loads(line)
        except ValueError:  # a last line cut short: read_log skipped it too
            continue
        unfold_fields(event, media, path)  # media kept beside the log, as read_log reads it
        kind = event.get("event")
        if kind == "message":
            message = from_json(event["message"])
            if isinstance(message, Message) and _user_line(message):
                (rec.turns[-1].then if rec.turns else rec.task).append(message)
        elif kind == "reply":
            reply = from_json(event["reply"])
            if isinstance(reply, Reply):
                rec.turns.append(Turn(reply))
        elif kind == "compact" and event.get("how") == "undo":  # the turns a chat undid go
            replies = sum(1 for m in event.get("messages") or () if m.get("role") == "assistant")
            del rec.turns[replies:]
            if rec.turns:
                rec.turns[-1].then.clear()
    return rec


def _from_cassette(path: str) -> Recording:
    from toolwire.codecs import get_codec
    from toolwire.errors import ToolwireError
    from toolwire.http.cassette import cassette_writer, load_cassette, recorded_stream
    from toolwire.http.endpoints import wire_for_path
    from toolwire.transcript import Reply

    rec = Recording(path)
    try:
        items = load_cassette(path)
        rec.written_by = cassette_writer(path)
    except ToolwireError as exc:
        raise UserError(f"{path} is neither a toolwire run log nor a cassette ({exc})") from None
    for n, item in enumerate(items, 1):
        request_item, response = _interaction(path, n, item)
        if isinstance(response.get("status"), int) and response["status"] >= 400:
            continue  # an error answered: no turn of the model's (the request went again)
        try:
            found = wire_for_path(request_item["path"])
            if found is None:
                raise UserError(f"{path}: interaction {n} went to {request_item['path']}, "
                                "which no wire serves")
            rec.wire = found[0]
            codec = get_codec(rec.wire)
            request = codec.decode_request(request_item["body"])
            if n == 1:
                rec.system, rec.task = request.system, list(request.messages)
            for message in request.messages:
                for result in message.tool_results:
                    rec.results.setdefault(result.call_id, result)
            if "stream" in response:
                events = list(codec.decode_stream([recorded_stream(response["stream"])]))
                reply = getattr(events[-1], "reply", None) if events else None
                if not isinstance(reply, Reply):
                    raise UserError(f"{path}: interaction {n}'s stream holds no whole reply")
            else:
                reply = codec.decode_response(response["body"])
        except ToolwireError as exc:
            raise UserError(f"{path}: interaction {n}: {exc}") from None
        except (KeyError, TypeError, AttributeError, IndexError):
            raise UserError(f"{path}: interaction {n} is not what a recording holds; record the "
                            "run again with --record") from None
        if n > 1 and request.messages and _user_line(request.messages[-1]) and rec.turns:
            rec.turns[-1].then.append(request.messages[-1])
        rec.turns.append(Turn(reply))
        rec.requests.append(request)
    return rec


def _interaction(path: str, n: int, item: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The request and response of cassette interaction ``n``, checked for what replay reads."""
    request = item.get("request") if isinstance(item, dict) else None
    response = item.get("response") if isinstance(item, dict) else None
    if not isinstance(request, dict) or not isinstance(request.get("path"), str) \
            or "body" not in request:
        raise UserError(f"{path}: interaction {n} has no request with a path and a body; "
                        "record the run again with --record")
    if not isinstance(response, dict) or not ("stream" in response or "body" in response):
        raise UserError(f"{path}: interaction {n} has no response with a body or a stream; "
                        "record the run again with --record")
    return request, response
