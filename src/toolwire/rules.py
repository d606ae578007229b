"""The pairing and ordering rules provider APIs enforce on a transcript, checked up front.

Owns: `Problem`, `check_transcript` and `check_request` (a raw body: the wire's own refusals
first, then the transcript's rules). The check only reads: it never changes, reorders or
repairs a message. Without a wire it applies the rules every API shares (each call answered
exactly once, in the tool message directly after the assistant message that made it; unique
call ids; calls only in assistant messages, results only in tool messages). With a wire it adds
that wire's own rules (id characters, tool names, result placement and turn order), as the
wire registry records them (`toolwire.codecs.registry.WireRules`).

Imports only `transcript` and the wire registry (which loads no codec; `check_request` asks
the wire's codec through ``get_codec`` when it runs); must not import a codec module, the
transport or anything that does I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolwire.codecs.registry import Wire, get_wire
from toolwire.transcript import Message, ReasoningPart, ToolCallPart, ToolResultPart

Severity = Literal["error", "warning"]



@dataclass(frozen=True, kw_only=True, slots=True)
class Problem:
    """One broken rule.

    ``index`` is the position of the message at fault; ``rule`` a short stable code (for
    example ``"missing_result"``); ``message`` says what is wrong, naming the call id and tool;
    ``fix`` says how to repair it. ``severity`` is ``"error"`` when the provider rejects the
    request and ``"warning"`` when it accepts it but the model is likely to be misled.
    """

    index: int
    rule: str
    message: str
    fix: str
    severity: Severity = "error"

    def __str__(self) -> str:
        head = f"message {self.index}: {self.severity} [{self.rule}]"
        return f"{head} {self.message}. Fix: {self.fix}."


@dataclass(frozen=True, slots=True)
class _Call:
    index: int  # message index
    pos: int  # position among that message's calls
    part: ToolCallPart

    @property
    def key(self) -> tuple[int, int]:
        return (self.index, self.pos)


def _call_label(part: ToolCallPart) -> str:
    return f"call {part.id!r} ({part.name})"


def check_transcript(messages: Iterable[Message], wire: str | None = None) -> list[Problem]:
    """Every rule the transcript breaks, in message order; an empty list when it is sound.

    ``wire`` is a registered wire's name (see `toolwire.codecs.WIRES`); ``None`` checks only
    the rules all of them share. An unknown name is a `ValueError` naming the wires.
    """
    on = None if wire is None else get_wire(wire)
    msgs = tuple(messages)
    problems: list[Problem] = []
    problems += _check_shapes(msgs, on)
    problems += _check_ids(msgs, on)
    problems += _check_pairing(msgs, on)
    problems.sort(key=lambda p: p.index)
    return problems


def check_request(body: Mapping[str, Any], wire: str, *, model: str | None = None,
                  headers: Mapping[str, str] | None = None,
                  stream: bool | None = None) -> list[Problem]:
    """Every rule a raw request ``body`` in ``wire`` breaks, as the provider states them: what
    it refuses of the body itself (the wire's ``check_body``: roles the wire does not have,
    tool schemas, block order, the per-model rules; ``model`` is the one a URL named,
    ``headers`` the request's, which may name a request shape of its own), then the pairing
    and order rules of the transcript it holds. The emulator refuses a request for the first
    error here and ``toolwire check`` lists them all: one statement of the rules for both.
    """
    from toolwire.codecs import get_codec
    from toolwire.errors import ToolwireError

    codec = get_codec(wire)
    said = {**body, "model": model} if model and "model" not in body else dict(body)
    problems: list[Problem] = []
    refused = codec.check_body(said, headers)
    if refused:
        found = _AT.match(refused)
        problems.append(Problem(index=int(found.group(1)) if found else 0, rule="refused",
                                message=refused, fix="change the body as the message says"))
    try:
        request = codec.decode_request(body, model=model, stream=stream)
    except (ToolwireError, ValueError) as exc:
        return problems or [Problem(index=0, rule="malformed", message=f"malformed request: "
                                    f"{type(exc).__name__}: {exc}", fix="send a body of "
                                    f"the {wire} shape")]
    return problems + check_transcript(request.messages, wire)


_AT = re.compile(r"^(?:messages|input|contents)[.\[](\d+)")


# --------------------------------------------------------------------------- message shapes


def _check_shapes(msgs: Sequence[Message], wire: Wire | None) -> list[Problem]:
    out: list[Problem] = []
    for i, msg in enumerate(msgs):
        for part in msg.parts:
            if isinstance(part, ToolCallPart) and msg.role != "assistant":
                out.append(Problem(
                    index=i, rule="call_outside_assistant",
                    message=f"a {msg.role} message holds {_call_label(part)}; "
                            "only assistant messages make tool calls",
                    fix="move the call into an assistant message",
                ))
            elif isinstance(part, ToolResultPart) and msg.role != "tool":
                out.append(Problem(
                    index=i, rule="result_outside_tool",
                    message=f"a {msg.role} message holds the result for call {part.call_id!r}; "
                            "results belong in a tool message",
                    fix="move the result into the tool message directly after the assistant "
                        "message that made the call",
                ))
            elif isinstance(part, ReasoningPart) and msg.role == "tool":
                out.append(Problem(
                    index=i, rule="unexpected_part",
                    message="a tool message holds a reasoning part; "
                            "a tool message carries results (and text after them)",
                    fix="move the reasoning into the assistant message it belongs to",
                ))
        if msg.role == "tool":
            out += _check_tool_message(msgs, i, wire)
        calls_here = msg.role == "assistant" and msg.tool_calls
        if wire is not None and wire.rules.call_after_user and calls_here:
            out += _check_call_turn(msgs, i, wire.name)
    return out


def _check_tool_message(msgs: Sequence[Message], i: int, wire: Wire | None) -> list[Problem]:
    msg = msgs[i]
    if not msg.tool_results:
        prev = msgs[i - 1] if i > 0 else None
        if prev is not None and prev.role == "assistant" and prev.tool_calls:
            fix = f"put the results for the calls of message {i - 1} in it"
        else:
            fix = "remove it"
        return [Problem(index=i, rule="empty_tool_message",
                        message="a tool message holds no results", fix=fix)]
    if wire is not None and wire.rules.results_first:
        last_result = max(j for j, p in enumerate(msg.parts) if isinstance(p, ToolResultPart))
        if any(not isinstance(p, ToolResultPart) for p in msg.parts[:last_result]):
            return [Problem(
                index=i, rule="text_before_results",
                message="the tool message has other content before its results; "
                        f"{wire.name} wants every tool result first in the user message",
                fix="put the text after the results",
            )]
    return []


def _check_call_turn(msgs: Sequence[Message], i: int, wire: str) -> list[Problem]:
    j = i - 1
    while j >= 0 and msgs[j].role == "system":
        j -= 1
    if j >= 0 and msgs[j].role in ("user", "tool"):
        return []
    where = f"follows an {msgs[j].role} message" if j >= 0 else "has no user message before it"
    return [Problem(
        index=i, rule="turn_order",
        message=f"the assistant message with tool calls {where}; {wire} wants a "
                "function-call turn directly after a user turn or a function-response turn",
        fix="insert a user message before it, or merge it into the assistant message before it",
    )]


# --------------------------------------------------------------------------- ids and names


def _check_ids(msgs: Sequence[Message], wire: Wire | None) -> list[Problem]:
    out: list[Problem] = []
    first_use: dict[str, int] = {}
    for i, msg in enumerate(msgs):
        for call in msg.tool_calls:
            if call.id in first_use:
                out.append(Problem(
                    index=i, rule="duplicate_call_id",
                    message=f"call id {call.id!r} ({call.name}) is used again; "
                            f"a call in message {first_use[call.id]} already has it",
                    fix="give every call its own id, and its result the same id",
                ))
            elif call.id:
                first_use[call.id] = i
            if wire is not None:
                out += _check_call_for_wire(i, call, wire)
    return out


def _check_call_for_wire(i: int, call: ToolCallPart, wire: Wire) -> list[Problem]:
    out: list[Problem] = []
    rules = wire.rules
    if not call.id and rules.results_by == "id":
        out.append(Problem(
            index=i, rule="empty_call_id",
            message=f"the call to {call.name} has an empty id; "
                    f"{wire.name} matches results to calls by id",
            fix="give the call an id and use the same id as its result's call_id",
        ))
    elif rules.id_pattern is not None and not rules.id_pattern.fullmatch(call.id):
        out.append(Problem(
            index=i, rule="bad_call_id",
            message=f"{wire.name} rejects {_call_label(call)}: {rules.id_wording}",
            fix="rewrite the id (and its result's call_id) with only those characters",
        ))
    if not rules.name_pattern.fullmatch(call.name):
        out.append(Problem(
            index=i, rule="bad_tool_name",
            message=f"{wire.name} rejects the tool name {call.name!r} of call {call.id!r}; "
                    f"it allows {rules.name_wording}",
            fix="rename the tool (in the tool list and in every call) to a name the wire accepts",
        ))
    return out


# --------------------------------------------------------------------------- pairing


def _check_pairing(msgs: Sequence[Message], wire: Wire | None) -> list[Problem]:
    by_id: dict[str, list[_Call]] = {}
    for i, msg in enumerate(msgs):
        for pos, part in enumerate(msg.tool_calls):
            by_id.setdefault(part.id, []).append(_Call(i, pos, part))
    answered: dict[tuple[int, int], int] = {}  # call key -> index of the message answering it
    out: list[Problem] = []
    for r, msg in enumerate(msgs):
        matched: list[tuple[ToolResultPart, _Call]] = []
        for result in msg.parts:
            if isinstance(result, ToolResultPart):
                call, problem = _match(result, r, by_id.get(result.call_id, []), answered)
                if problem is not None:
                    out.append(problem)
                if call is not None and call.index == r - 1:
                    matched.append((result, call))
        if wire is not None and msg.role == "tool" and r > 0:
            out += _check_batch(msgs, r, matched, wire)
    for calls in by_id.values():
        for call in calls:
            if call.key not in answered:
                out.append(_missing(msgs, call))
    return out


def _match(
    result: ToolResultPart, r: int, calls: list[_Call], answered: dict[tuple[int, int], int]
) -> tuple[_Call | None, Problem | None]:
    """Pair one result with a call: the message just before first, then earlier, then later."""
    cid = result.call_id
    if not calls:
        return None, Problem(
            index=r, rule="orphan_result",
            message=f"the result for call {cid!r} answers no call in the transcript",
            fix="remove it, or set its call_id to the id of the call it answers",
        )
    direct = [c for c in calls if c.index == r - 1]
    earlier = [c for c in reversed(calls) if c.index < r - 1]
    later = [c for c in calls if c.index >= r]
    group = direct or earlier or later
    free = [c for c in group if c.key not in answered]
    if not free:
        return None, Problem(
            index=r, rule="duplicate_result",
            message=f"call {cid!r} ({group[0].part.name}) already has a result in message "
                    f"{answered[group[0].key]}; this is a second one",
            fix=f"keep one result for {cid!r} and remove the other",
        )
    call = free[0]
    answered[call.key] = r
    if direct:
        return call, None
    if earlier:
        return call, Problem(
            index=r, rule="misplaced_result",
            message=f"the result for {_call_label(call.part)} is not in the tool message "
                    f"directly after message {call.index}, which made the call",
            fix=f"move it into the tool message at index {call.index + 1}",
        )
    return call, Problem(
        index=r, rule="result_before_call",
        message=f"the result for {_call_label(call.part)} comes before the call "
                f"(made in message {call.index})",
        fix=f"move it into the tool message directly after message {call.index}",
    )


def _missing(msgs: Sequence[Message], call: _Call) -> Problem:
    i = call.index
    label = _call_label(call.part)
    if i + 1 >= len(msgs):
        message = f"{label} has no result: the transcript ends with the message that made it"
        fix = f"run the tool and append a tool message holding the result for {call.part.id!r}"
    elif msgs[i + 1].role == "tool":
        message = f"{label} has no result in the tool message at index {i + 1}"
        fix = f"add a result with call_id {call.part.id!r} to the tool message at index {i + 1}"
    else:
        message = f"{label} has no result: the next message is a {msgs[i + 1].role} message"
        fix = f"insert a tool message holding the result for {call.part.id!r} after message {i}"
    return Problem(index=i, rule="missing_result", message=message, fix=fix)


def _check_batch(
    msgs: Sequence[Message], r: int, matched: list[tuple[ToolResultPart, _Call]], wire: Wire
) -> list[Problem]:
    """Wire rules on the results answering the assistant message just before message ``r``."""
    out: list[Problem] = []
    calls = msgs[r - 1].tool_calls if msgs[r - 1].role == "assistant" else ()
    results = msgs[r].tool_results
    if wire.rules.one_result_per_call and calls and len(results) != len(calls):
        out.append(Problem(
            index=r, rule="result_count",
            message=f"the tool message holds {len(results)} result(s) for the {len(calls)} "
                    f"call(s) of message {r - 1}; {wire.name} wants exactly one function "
                    "response per function call, all in one turn",
            fix="answer every call exactly once in this one tool message",
        ))
    if wire.rules.results_by != "position":
        return out
    positions = [call.pos for _, call in matched]
    if positions != sorted(positions):
        got = ", ".join(repr(res.call_id) for res, _ in matched)
        want = ", ".join(repr(c.part.id) for _, c in sorted(matched, key=lambda m: m[1].pos))
        out.append(Problem(
            index=r, rule="result_order", severity="warning",
            message=f"the results come in the order {got} but the calls were made in the order "
                    f"{want}; {wire.name} matches results to calls by position",
            fix="put the results in the order of the calls",
        ))
    for res, call in matched:
        if res.name is not None and res.name != call.part.name:
            out.append(Problem(
                index=r, rule="result_name_mismatch", severity="warning",
                message=f"the result for call {res.call_id!r} names the tool {res.name!r} but "
                        f"the call was to {call.part.name!r}; {wire.name} matches results by "
                        "tool name",
                fix=f"set the result's name to {call.part.name!r}",
            ))
    return out


__all__ = ["Problem", "Severity", "check_request", "check_transcript"]
