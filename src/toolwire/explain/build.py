"""Naming what every message in a model's context is doing, and what ended the loop.

Owns `Explanation`, `Entry`, `explain_file`, `explain_conversation`, `render_text`,
`describe_media` and `usage_line` (a turn's tokens, cache share and cost in words). Input is a
run log, a cassette, or any request or reply body (or raw stream text) in any wire, detected.
Media are listed by kind, type, pixels and size, and an entry's raw JSON holds no base64 (it
says how many bytes were left out). The HTML page is drawn from the same `Explanation` by
`toolwire.explain.html`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, assert_never

from toolwire import _json
from toolwire.agent.timeline import TimeSpan
from toolwire.errors import TranscriptError
from toolwire.media import image_size
from toolwire.mediafiles import MediaFiles, media_dicts
from toolwire.transcript import (
    MediaPart,
    Message,
    OpaquePart,
    ReasoningPart,
    Reply,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from toolwire.transcript_json import to_json

Lane = Literal["harness", "model", "tools"]

STOP_MEANINGS: dict[str, str] = {
    "answered": "the model replied without asking for a tool: that reply is the answer",
    "end_turn": "the model replied without asking for a tool: that reply is the answer",
    "tool_calls": "the last reply asks for tools that have not been answered yet",
    "max_turns": "the turn limit was reached",
    "max_tokens": "the reply was cut off at the token limit",
    "truncated": "the reply was cut off at the token limit in the middle of a tool call",
    "refusal": "the model refused",
    "refused": "the model refused",
    "pause_turn": "the provider paused a long turn; send the reply back to continue",
    "turn_limit": "the turn limit (max_turns) was reached before an answer",
    "token_budget": "the run's token budget was used up before an answer",
    "cost_budget": "the run's cost budget was used up before an answer",
    "time_limit": "the run's time limit was reached before an answer",
    "cut_off": "the reply was cut off at the token limit",
    "content_filter": "the provider's content filter stopped the reply",
    "context_full": "the conversation no longer fits the model's context window",
    "stopped": "its caller stopped the run (Ctrl-C, or the program ended it) before an answer",
    "provider_error": "the provider kept failing; the error is on the log's stop line",
    "model_error": "the model reported an error in place of a reply",
    "output_invalid": "the structured answer did not fit its schema after every retry",
    "error": "the run raised an error",
    "awaiting_approval": "the run stopped to wait for decisions on calls that need approval; "
                         "`toolwire resume LOG --allow ID --deny ID` goes on",
    "bad_reply": "a reply arrived that could not be used, even when asked for once more: a "
                 "broken server or proxy, not a model that did not finish",
    "too_large": "a model server sent more than a bound allows (a body, a decompressed body, "
                 "a line of a stream or an error body); the error names the bound to raise",
    "interrupted": "the log ends without a stop line: the process ended mid-run; `toolwire "
                   "resume` goes on from there (if what ended it is still there, it ends the "
                   "same way)",
}


@dataclass(frozen=True, slots=True)
class Entry:
    """One thing in the context, and what it is doing there."""

    label: str
    summary: str
    lane: Lane
    raw: Any
    index: int | None = None  # position in the message list (None: system prompt, tools)
    call_id: str | None = None  # set on a tool call
    answers: str | None = None  # set on a tool result: the call it answers
    is_error: bool = False
    turn: int | None = None
    media: tuple[MediaPart, ...] = ()  # the images, documents and audio it holds


@dataclass(slots=True)
class Explanation:
    source: str
    wire: str | None
    entries: list[Entry] = field(default_factory=list)
    stop: str | None = None
    stop_meaning: str = ""
    turn_usage: list[Usage] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timings: dict[int, dict[str, Any]] = field(default_factory=dict)
    """Per turn, from a run log: ``reply``, ``first_token``, ``first_tool`` (seconds from the
    request) and ``early`` (the first tool started while the reply streamed)."""
    spans: list[TimeSpan] = field(default_factory=list)
    """When each model call and tool call ran, from a run log's timestamps."""
    media_folder: Path | None = None
    """A run log's media folder (`toolwire.mediafiles`), when it has one."""
    models: list[str] = field(default_factory=list)
    """Which model of a fallback chain answered each turn, why the chain moved on, and what
    the conversation lost on the way (`chain_lines`), from a run log."""

    @property
    def usage(self) -> Usage:
        total = Usage()
        for u in self.turn_usage:
            total = total + u
        return total


def _short(text: str, limit: int = 100) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _part_entries(message: Message, index: int, names: dict[str, str], is_last: bool,
                  turn: int | None) -> list[Entry]:
    out: list[Entry] = []
    final = message.role == "assistant" and is_last and not message.tool_calls
    for part in message.parts:
        raw = _without_bytes(to_json(part))
        if isinstance(part, TextPart):
            if message.role == "assistant":
                label = "final answer" if final else "assistant text"
                lane: Lane = "model"
            elif message.role == "system":
                label, lane = "system instruction", "harness"
            else:
                label = "user task" if index == 0 else "user message"
                lane = "harness"
            out.append(Entry(label, _short(part.text), lane, raw, index, turn=turn))
        elif isinstance(part, ToolCallPart):
            names[part.id] = part.name
            args = part.arguments_text
            bad = f" (arguments do not parse: {part.parse_error})" if part.parse_error else ""
            by = f" (made by code: {part.caller})" if part.caller is not None else ""
            out.append(Entry(f"tool call {part.name}{by}",
                             f"id {part.id}: {_short(args, 80)}{bad}",
                             "model", raw, index, call_id=part.id, turn=turn))
        elif isinstance(part, ToolResultPart):
            name = names.get(part.call_id, part.name or "?")
            kind = "error result" if part.is_error else "result"
            out.append(Entry(f"{kind} for {name}",
                             f"answers call {part.call_id}: {_short(part.text, 80)}"
                             f"{_media_note(part.media)}",
                             "tools", raw, index, answers=part.call_id, is_error=part.is_error,
                             turn=turn, media=part.media))
        elif isinstance(part, ReasoningPart):
            wires = ", ".join(sorted(part.provider_data or {})) or "no provider payload"
            summary = _short(part.text) if part.text else "(no readable text)"
            out.append(Entry("reasoning, passed back unchanged", f"{summary} [{wires}]",
                             "model", raw, index, turn=turn))
        elif isinstance(part, OpaquePart):
            out.append(Entry(f"provider block {part.kind}",
                             f"carried as is for {part.wire}; not run by the harness",
                             "model", raw, index, turn=turn))
        elif isinstance(part, MediaPart):
            lane = "model" if message.role == "assistant" else "harness"
            out.append(Entry(f"{part.kind} {part.media_type}", describe_media(part), lane, raw,
                             index, turn=turn, media=(part,)))
        else:
            assert_never(part)
    return out


def describe_media(part: MediaPart) -> str:
    """A media part in words: kind, name, type, pixels and bytes (never the bytes themselves),
    or where it is (a URL, a provider's file)."""
    size = image_size(part.data) if part.kind == "image" and part.data else None
    pixels = f" {size[0]}x{size[1]}" if size else ""
    if part.data is not None:
        held = f", {part.size} bytes"
    else:
        held = f", {part.url}" if part.url else ", a file at " + ", ".join(part.file_ids or ())
    named = f" {part.name}" if part.name else ""
    return f"{part.kind}{named} ({part.media_type}{pixels}{held})"


def _media_note(media: tuple[MediaPart, ...]) -> str:
    return "".join(f" [{describe_media(m)}]" for m in media)


def _without_bytes(raw: dict[str, Any]) -> dict[str, Any]:
    """A part's saved JSON with the base64 of its media replaced by how long it was."""
    for media in media_dicts(raw):
        if isinstance(media.get("data"), str):
            media["data"] = f"({len(media['data']) * 3 // 4} bytes of base64, left out)"
    return raw


def explain_conversation(
    *,
    source: str,
    wire: str | None,
    system: str | None,
    tools: Sequence[ToolSpec],
    messages: Sequence[Message],
    stop: str | None,
    turn_usage: Sequence[Usage] = (),
    notes: Sequence[str] = (),
) -> Explanation:
    """The explanation of one conversation given as canonical values."""
    expl = Explanation(source=source, wire=wire, stop=stop, turn_usage=list(turn_usage),
                       notes=list(notes))
    if system:
        expl.entries.append(Entry("system prompt", _short(system), "harness",
                                  {"system": system}))
    if tools:
        raws = [to_json(t) for t in tools]
        size = len(json.dumps(raws))
        expl.entries.append(Entry(
            "tool definitions",
            f"{len(tools)} tool(s), {size} characters: " + ", ".join(t.name for t in tools),
            "harness", raws))
    names: dict[str, str] = {}
    turn = 0
    for i, message in enumerate(messages):
        if message.role == "assistant":
            turn += 1
        expl.entries.extend(_part_entries(message, i, names, i == len(messages) - 1,
                                          turn if message.role != "user" else None))
    if stop is not None:
        expl.stop_meaning = STOP_MEANINGS.get(stop, f"the run ended: {stop.replace('_', ' ')}")
    return expl


def chain_lines(models: Sequence[dict[str, Any]]) -> list[str]:
    """A run log's ``model`` lines in words: per turn, the model of the fallback chain that
    answered (or that none did), each model passed over before it and why, and each loss."""
    lines: list[str] = []
    for m in models:
        turn = f"turn {m.get('turn')}"
        for failed in m.get("failed") or ():
            name, why, error = [*failed, "", "", ""][:3]
            lines.append(f"{turn}: {name} failed ({why}: {_short(str(error), 160)})")
        lines.append(f"{turn}: answered by {m['model']}" if m.get("model")
                     else f"{turn}: no model of the chain answered; the run ended")
        lines.extend(f"{turn}: lost on the way to {m.get('model')}: {loss}"
                     for loss in m.get("losses") or ())
    return lines


def _reply_stop(reply: Reply) -> str:
    if reply.truncated_call:
        return "truncated"
    if reply.stop == "end_turn" and not reply.tool_calls:
        return "answered"
    return reply.stop


def _from_runlog(path: Path) -> Explanation:
    from toolwire.agent.runlog import read_log

    run = read_log(path)
    header = run.header
    tools = [ToolSpec(name=t["name"], description=t.get("description", ""),
                      input_schema=t.get("input_schema", {})) for t in header.get("tools") or ()]
    notes = [f"model: {header.get('model')}"]
    notes += [f"turn {r.get('turn')}: the request was retried after {r.get('error_type')}: "
              f"{r.get('error')}" for r in run.retries]
    notes += run.notes
    expl = explain_conversation(
        source=f"run log {path}", wire=None, system=header.get("system"), tools=tools,
        messages=run.messages, stop=run.stop or "interrupted", turn_usage=run.turn_usage,
        notes=notes)
    expl.timings, expl.spans = run.time.turns, run.time.spans
    expl.models = chain_lines(run.models)
    folder = MediaFiles(path).folder
    expl.media_folder = folder if folder.is_dir() else None
    return expl


def _decode_stream_text(wire: str, text: str | bytes) -> Reply:
    from toolwire.codecs import get_codec
    from toolwire.events import StreamEnd

    reply = None
    data = text.encode("utf-8") if isinstance(text, str) else text
    for event in get_codec(wire).decode_stream([data]):
        if isinstance(event, StreamEnd):
            reply = event.reply
    assert reply is not None
    return reply


def _from_cassette(path: Path) -> Explanation:
    from toolwire.codecs import get_codec
    from toolwire.codecs.registry import wire_at
    from toolwire.conversion import detect_wire
    from toolwire.http.cassette import load_cassette, recorded_stream

    interactions = load_cassette(path)
    if not interactions:
        raise TranscriptError(f"cassette {path} holds no interaction")
    replies: list[Reply] = []
    wire = None
    request = None
    for item in interactions:
        route = wire_at(str(item["request"].get("path", "")).split("?")[0])
        wire = route.wire.name if route else detect_wire(item["request"]["body"])[0]
        codec = get_codec(wire)
        said = route.url_says() if route else {}
        request = codec.decode_request(item["request"]["body"], **said)
        response = item["response"]
        if "stream" in response and response.get("status", 200) < 400:
            replies.append(_decode_stream_text(wire, recorded_stream(response["stream"])))
        elif "body" in response and response.get("status", 200) < 400:
            replies.append(codec.decode_response(response["body"], request=request))
    assert request is not None
    messages = list(request.messages)
    if replies:
        messages.append(replies[-1].message)
    return explain_conversation(
        source=f"cassette {path}", wire=wire, system=request.system, tools=request.tools,
        messages=messages, stop=_reply_stop(replies[-1]) if replies else None,
        turn_usage=[r.usage for r in replies])


def explain_body(body: Any, source: str = "body") -> Explanation:
    """Explain one request or reply body (or raw stream text) in any wire."""
    from toolwire.codecs import get_codec
    from toolwire.conversion import detect_wire

    wire, kind = detect_wire(body)
    codec = get_codec(wire)
    if kind == "request":
        request = codec.decode_request(body)
        expl = explain_conversation(source=f"{wire} request ({source})", wire=wire,
                                    system=request.system, tools=request.tools,
                                    messages=request.messages, stop=None)
        expl.stop_meaning = "a request: the model has not answered it yet"
        return expl
    reply = (codec.decode_response(body) if kind == "response"
             else _decode_stream_text(wire, body))
    return explain_conversation(source=f"{wire} {'reply' if kind == 'response' else 'stream'} "
                                f"({source})", wire=wire, system=None, tools=(),
                                messages=[reply.message], stop=_reply_stop(reply),
                                turn_usage=[reply.usage])


def explain_file(path: str | Path) -> Explanation:
    """Explain a run log, a cassette, or a body in any wire, read from ``path``."""
    from toolwire.codecs.eventstream import is_event_stream

    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise TranscriptError(f"{path} does not exist") from None
    if is_event_stream(raw):  # a binary stream (Bedrock's), explained as it is
        return explain_body(raw, str(path))
    text = raw.decode("utf-8")
    from toolwire.agent.runlog import is_log_text

    if is_log_text(text):
        return _from_runlog(path)
    try:
        data = _json.loads(text)
    except ValueError:
        return explain_body(text, str(path))
    if isinstance(data, dict) and "toolwire_cassette" in data:
        return _from_cassette(path)
    return explain_body(data, str(path))


def _money(cost: float | None) -> str:
    return "cost unknown" if cost is None else f"${cost:.4f}"


def usage_line(usage: Usage) -> str:
    """One turn's (or a run's) usage in words: tokens in and out, the cache's share of the
    input, reasoning, and the cost."""
    cached = ""
    if usage.cache_read_tokens or usage.cache_write_tokens:
        share = usage.cache_read_tokens / usage.input_tokens if usage.input_tokens else 0.0
        cached = (f" ({usage.cache_read_tokens} read from the cache, {share:.0%}; "
                  f"{usage.cache_write_tokens} written to it)")
    reasoning = f", {usage.reasoning_tokens} of them reasoning" if usage.reasoning_tokens else ""
    return (f"{usage.input_tokens} in{cached}, {usage.output_tokens} out{reasoning}, "
            f"{_money(usage.cost)}")


def render_text(expl: Explanation) -> str:
    """The explanation as plain text for a terminal."""
    lines = [f"{expl.source}" + (f" [{expl.wire}]" if expl.wire else "")]
    for e in expl.entries:
        where = f"#{e.index:<3}" if e.index is not None else "    "
        lines.append(f"{where} {e.lane:<7} {e.label}: {e.summary}")
    if expl.stop is not None or expl.stop_meaning:
        lines.append(f"stop: {expl.stop or '-'}: {expl.stop_meaning}")
    if expl.turn_usage:
        lines.append("tokens per turn (input/output): " + ", ".join(
            f"{n}: {u.input_tokens}/{u.output_tokens}" for n, u in enumerate(expl.turn_usage, 1)))
        lines.extend(f"turn {n}: {usage_line(u)}" for n, u in enumerate(expl.turn_usage, 1))
        total = expl.usage
        lines.append(f"total tokens: {total.input_tokens} in, {total.output_tokens} out")
        lines.append(f"run: {usage_line(total)}")
    lines.extend(_timing(turn, t) for turn, t in sorted(expl.timings.items()))
    lines.extend(f"model: {line}" for line in expl.models)
    lines.extend(f"note: {n}" for n in expl.notes)
    return "\n".join(lines)


def _timing(turn: int, t: dict[str, Any]) -> str:
    """One turn's time, as ``explain`` shows it."""
    said = [f"{name} {t[key]:.3f} s" for key, name in (
        ("first_token", "first token"), ("first_tool", "first tool")) if key in t]
    if "first_tool" in t and t.get("early"):
        said[-1] += " (early: the reply was still streaming)"
    if "reply" in t:
        said.append(f"whole reply {t['reply']:.3f} s")
    return f"turn {turn}: " + ", ".join(said or ["no timing recorded"]) + " after the request"
