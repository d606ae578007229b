"""Transcript rules: each rule reported with its exact text; nothing reported for sound ones."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import texts, tool_rounds
from toolwire.codecs import WIRES
from toolwire.rules import Problem, check_transcript
from toolwire.transcript import (
    Message,
    OpaquePart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    replace,
)


def user(text: str = "go") -> Message:
    return Message.user(text)


def calls(*specs: str, text: str | None = None) -> Message:
    """An assistant message with calls given as "id:name" (name defaults to f)."""
    parts: list[Any] = [TextPart(text=text)] if text else []
    for spec in specs:
        cid, _, name = spec.partition(":")
        parts.append(ToolCallPart(id=cid, name=name or "f", arguments={}))
    return Message(role="assistant", parts=tuple(parts))


def results(*specs: str) -> Message:
    """A tool message with results given as "call_id" or "call_id:name"."""
    parts = []
    for spec in specs:
        cid, _, name = spec.partition(":")
        parts.append(ToolResultPart(call_id=cid, content="ok", name=name or None))
    return Message(role="tool", parts=tuple(parts))


def only(problems: list[Problem]) -> Problem:
    assert len(problems) == 1, [str(p) for p in problems]
    return problems[0]


SOUND = [
    Message(role="system", parts=(TextPart(text="be brief"),)),
    user(),
    calls("c1:read", "c2:grep", text="looking"),
    results("c1:read", "c2:grep"),
    calls("c3:edit"),
    results("c3:edit"),
    user("thanks"),
    Message.assistant("done"),
]


@pytest.mark.parametrize("wire", [None, *WIRES])
def test_a_sound_transcript_has_no_problems(wire: Any) -> None:
    assert check_transcript(SOUND, wire) == []
    assert check_transcript(iter(SOUND), wire) == []
    assert check_transcript([], wire) == []


def test_check_does_not_change_its_input() -> None:
    msgs = [user(), calls("c1", "c1"), results("c9")]
    before = list(msgs)
    check_transcript(msgs, "anthropic-messages")
    assert msgs == before


def test_unknown_wire_is_a_value_error() -> None:
    with pytest.raises(ValueError) as info:
        check_transcript(SOUND, "openai")  # type: ignore[arg-type]
    assert str(info.value) == f"unknown wire 'openai'; choose one of: {', '.join(WIRES)}"


def test_problem_str_and_fields() -> None:
    p = Problem(index=3, rule="missing_result", message="call 'a' (f) has no result", fix="add one")
    assert p.severity == "error"
    assert str(p) == "message 3: error [missing_result] call 'a' (f) has no result. Fix: add one."
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.index = 4  # type: ignore[misc]


# --------------------------------------------------------------------------- missing results


def test_missing_result_in_the_tool_message() -> None:
    p = only(check_transcript([user(), calls("c1:read", "c2:grep"), results("c1")]))
    assert (p.index, p.rule, p.severity) == (1, "missing_result", "error")
    assert p.message == "call 'c2' (grep) has no result in the tool message at index 2"
    assert p.fix == "add a result with call_id 'c2' to the tool message at index 2"


def test_missing_result_when_no_tool_message_follows() -> None:
    p = only(check_transcript([user(), calls("c1:read"), user("and?")]))
    assert (p.index, p.rule) == (1, "missing_result")
    assert p.message == "call 'c1' (read) has no result: the next message is a user message"
    assert p.fix == "insert a tool message holding the result for 'c1' after message 1"


def test_missing_result_at_the_end_of_the_transcript() -> None:
    p = only(check_transcript([user(), calls("c1:read")]))
    assert (p.index, p.rule) == (1, "missing_result")
    assert p.message == (
        "call 'c1' (read) has no result: the transcript ends with the message that made it"
    )
    assert p.fix == "run the tool and append a tool message holding the result for 'c1'"


def test_every_missing_result_is_named() -> None:
    problems = check_transcript([user(), calls("a", "b", "c"), results("b")])
    assert [(p.rule, p.index) for p in problems] == [("missing_result", 1)] * 2
    assert "'a'" in problems[0].message and "'c'" in problems[1].message


# --------------------------------------------------------------------------- extra results


def test_two_results_for_one_call() -> None:
    p = only(check_transcript([user(), calls("c1:read"), results("c1", "c1")]))
    assert (p.index, p.rule) == (2, "duplicate_result")
    assert p.message == (
        "call 'c1' (read) already has a result in message 2; this is a second one"
    )
    assert p.fix == "keep one result for 'c1' and remove the other"


def test_a_second_result_in_a_later_tool_message() -> None:
    msgs = [user(), calls("c1:read"), results("c1"), results("c1")]
    p = only(check_transcript(msgs))
    assert (p.index, p.rule) == (3, "duplicate_result")
    assert "already has a result in message 2" in p.message


def test_result_with_no_call() -> None:
    p = only(check_transcript([user(), calls("c1"), results("c1", "zz")]))
    assert (p.index, p.rule) == (2, "orphan_result")
    assert p.message == "the result for call 'zz' answers no call in the transcript"
    assert p.fix == "remove it, or set its call_id to the id of the call it answers"


def test_result_before_its_call() -> None:
    msgs = [user(), results("c1"), calls("c1:read")]
    p = only(check_transcript(msgs))
    assert (p.index, p.rule) == (1, "result_before_call")
    assert p.message == "the result for call 'c1' (read) comes before the call (made in message 2)"
    assert p.fix == "move it into the tool message directly after message 2"


def test_result_not_directly_after_its_call() -> None:
    msgs = [user(), calls("c1:read"), user("wait"), results("c1")]
    p = only(check_transcript(msgs))
    assert (p.index, p.rule) == (3, "misplaced_result")
    assert p.message == (
        "the result for call 'c1' (read) is not in the tool message directly after message 1, "
        "which made the call"
    )
    assert p.fix == "move it into the tool message at index 2"


def test_results_split_over_two_tool_messages() -> None:
    msgs = [user(), calls("a", "b"), results("a"), results("b")]
    p = only(check_transcript(msgs))
    assert (p.index, p.rule) == (3, "misplaced_result")
    assert "call 'b' (f)" in p.message


def test_result_answering_an_older_round() -> None:
    msgs = [user(), calls("a"), results("a"), calls("b"), results("b", "a")]
    p = only(check_transcript(msgs))
    assert (p.index, p.rule) == (4, "duplicate_result")
    assert p.message == "call 'a' (f) already has a result in message 2; this is a second one"


# --------------------------------------------------------------------------- ids and shapes


def test_duplicate_call_ids() -> None:
    msgs = [user(), calls("a:read"), results("a"), calls("a:grep"), results("a")]
    p = only(check_transcript(msgs))
    assert (p.index, p.rule) == (3, "duplicate_call_id")
    assert p.message == "call id 'a' (grep) is used again; a call in message 1 already has it"
    assert p.fix == "give every call its own id, and its result the same id"


def test_duplicate_call_ids_in_one_message_pair_one_to_one() -> None:
    assert [p.rule for p in check_transcript([user(), calls("a", "a"), results("a", "a")])] == [
        "duplicate_call_id"
    ]
    problems = check_transcript([user(), calls("a", "a"), results("a")])
    assert [p.rule for p in problems] == ["duplicate_call_id", "missing_result"]


def test_call_outside_an_assistant_message() -> None:
    msgs = [Message(role="user", parts=(ToolCallPart(id="c1", name="read"),)), results("c1")]
    p = only(check_transcript(msgs))
    assert (p.index, p.rule) == (0, "call_outside_assistant")
    assert p.message == (
        "a user message holds call 'c1' (read); only assistant messages make tool calls"
    )
    assert p.fix == "move the call into an assistant message"


def test_result_outside_a_tool_message() -> None:
    msgs = [user(), calls("c1"), Message(role="user", parts=(ToolResultPart(call_id="c1",
                                                                            content="x"),))]
    p = only(check_transcript(msgs))
    assert (p.index, p.rule) == (2, "result_outside_tool")
    assert p.message == (
        "a user message holds the result for call 'c1'; results belong in a tool message"
    )
    assert p.fix == (
        "move the result into the tool message directly after the assistant message that made "
        "the call"
    )


def test_tool_message_without_results() -> None:
    msgs = [user(), calls("c1"), Message(role="tool", parts=(TextPart(text="?"),))]
    problems = check_transcript(msgs)
    assert [(p.index, p.rule) for p in problems] == [(1, "missing_result"),
                                                     (2, "empty_tool_message")]
    assert problems[1].message == "a tool message holds no results"
    assert problems[1].fix == "put the results for the calls of message 1 in it"
    stray = only(check_transcript([user(), Message(role="tool")]))
    assert (stray.rule, stray.fix) == ("empty_tool_message", "remove it")


def test_reasoning_in_a_tool_message() -> None:
    tool = Message(role="tool", parts=(ToolResultPart(call_id="c1", content="x"),
                                       ReasoningPart(text="hm")))
    p = only(check_transcript([user(), calls("c1"), tool]))
    assert (p.index, p.rule) == (2, "unexpected_part")
    assert p.message == (
        "a tool message holds a reasoning part; a tool message carries results (and text after "
        "them)"
    )


# --------------------------------------------------------------------------- wire rules


def test_anthropic_id_characters() -> None:
    msgs = [user(),
            Message(role="assistant", parts=(ToolCallPart(id="functions.read:3", name="read"),)),
            Message(role="tool", parts=(ToolResultPart(call_id="functions.read:3", content="x"),))]
    assert check_transcript(msgs) == []
    assert check_transcript(msgs, "openai-chat") == []
    p = only(check_transcript(msgs, "anthropic-messages"))
    assert (p.index, p.rule) == (1, "bad_call_id")
    assert p.message == (
        "anthropic-messages rejects call 'functions.read:3' (read): an id may hold only letters, "
        "digits, '_' and '-'"
    )
    assert p.fix == "rewrite the id (and its result's call_id) with only those characters"


@pytest.mark.parametrize("wire", ["anthropic-messages", "openai-chat", "openai-responses"])
def test_empty_ids_on_wires_that_match_by_id(wire: Any) -> None:
    msgs = [user(), calls(":read"), results(":read")]
    p = only(check_transcript(msgs, wire))
    assert (p.index, p.rule) == (1, "empty_call_id")
    assert p.message == f"the call to read has an empty id; {wire} matches results to calls by id"
    assert p.fix == "give the call an id and use the same id as its result's call_id"


@pytest.mark.parametrize("wire", [None, "ollama-chat", "gemini-generate"])
def test_empty_ids_are_fine_where_results_match_by_position(wire: Any) -> None:
    msgs = [user(), calls(":read", ":grep"), results(":read", ":grep")]
    assert check_transcript(msgs, wire) == []


@pytest.mark.parametrize(
    ("wire", "name", "allowed"),
    [
        ("openai-chat", "fs.read", "letters, digits, '_' and '-', 1 to 64 characters"),
        ("openai-responses", "x" * 65, "letters, digits, '_' and '-', 1 to 64 characters"),
        ("anthropic-messages", "fs:read", "letters, digits, '_' and '-', 1 to 128 characters"),
        ("anthropic-messages", "x" * 129, "letters, digits, '_' and '-', 1 to 128 characters"),
        ("gemini-generate", "1read", "a letter or '_' first, then letters, digits, '_', '.', ':' "
                                     "or '-', at most 128 characters"),
        ("gemini-generate", "read file", "a letter or '_' first, then letters, digits, '_', '.', "
                                         "':' or '-', at most 128 characters"),
        ("ollama-chat", "", "a name that is not empty"),
    ],
)
def test_tool_names_a_wire_rejects(wire: Any, name: str, allowed: str) -> None:
    msgs = [user(), Message(role="assistant", parts=(ToolCallPart(id="c1", name=name),)),
            results("c1")]
    p = only(check_transcript(msgs, wire))
    assert (p.index, p.rule) == (1, "bad_tool_name")
    assert p.message == f"{wire} rejects the tool name {name!r} of call 'c1'; it allows {allowed}"
    assert p.fix == (
        "rename the tool (in the tool list and in every call) to a name the wire accepts"
    )


@pytest.mark.parametrize(
    ("wire", "name"),
    [("gemini-generate", "fs.read"), ("gemini-generate", "ns:read"),
     ("anthropic-messages", "x" * 128), ("openai-chat", "read-file_2"),
     ("ollama-chat", "fs.read")],
)
def test_tool_names_a_wire_accepts(wire: Any, name: str) -> None:
    msgs = [user(), Message(role="assistant", parts=(ToolCallPart(id="c1", name=name),)),
            results("c1")]
    assert check_transcript(msgs, wire) == []


def test_anthropic_wants_results_before_text() -> None:
    before = Message(role="tool", parts=(TextPart(text="note"),
                                         ToolResultPart(call_id="c1", content="x")))
    after = Message(role="tool", parts=(ToolResultPart(call_id="c1", content="x"),
                                        TextPart(text="note")))
    assert check_transcript([user(), calls("c1"), after], "anthropic-messages") == []
    assert check_transcript([user(), calls("c1"), before], "openai-chat") == []
    p = only(check_transcript([user(), calls("c1"), before], "anthropic-messages"))
    assert (p.index, p.rule) == (2, "text_before_results")
    assert p.message == (
        "the tool message has other content before its results; anthropic-messages wants every "
        "tool result first in the user message"
    )
    assert p.fix == "put the text after the results"


@pytest.mark.parametrize("wire", ["ollama-chat", "gemini-generate"])
def test_results_out_of_call_order_warn_where_matching_is_by_position(wire: Any) -> None:
    msgs = [user(), calls("a:read", "b:grep"), results("b:grep", "a:read")]
    assert check_transcript(msgs) == []
    assert check_transcript(msgs, "anthropic-messages") == []
    p = only(check_transcript(msgs, wire))
    assert (p.index, p.rule, p.severity) == (2, "result_order", "warning")
    assert p.message == (
        f"the results come in the order 'b', 'a' but the calls were made in the order 'a', 'b'; "
        f"{wire} matches results to calls by position"
    )
    assert p.fix == "put the results in the order of the calls"
    assert str(p).startswith("message 2: warning [result_order] the results come")


@pytest.mark.parametrize("wire", ["ollama-chat", "gemini-generate"])
def test_result_named_after_another_tool(wire: Any) -> None:
    msgs = [user(), calls("a:read"), results("a:grep")]
    assert check_transcript(msgs, "openai-chat") == []
    p = only(check_transcript(msgs, wire))
    assert (p.index, p.rule, p.severity) == (2, "result_name_mismatch", "warning")
    assert p.message == (
        f"the result for call 'a' names the tool 'grep' but the call was to 'read'; {wire} "
        "matches results by tool name"
    )
    assert p.fix == "set the result's name to 'read'"


def test_gemini_counts_responses_against_calls() -> None:
    msgs = [user(), calls("a", "b", "c"), results("a")]
    problems = check_transcript(msgs, "gemini-generate")
    assert [(p.index, p.rule) for p in problems] == [
        (1, "missing_result"), (1, "missing_result"), (2, "result_count")
    ]
    assert problems[2].message == (
        "the tool message holds 1 result(s) for the 3 call(s) of message 1; gemini-generate "
        "wants exactly one function response per function call, all in one turn"
    )
    assert problems[2].fix == "answer every call exactly once in this one tool message"
    too_many = check_transcript([user(), calls("a"), results("a", "a")], "gemini-generate")
    assert [p.rule for p in too_many] == ["duplicate_result", "result_count"]


def test_gemini_turn_adjacency() -> None:
    msgs = [user(), Message.assistant("let me look"), calls("a"), results("a")]
    assert check_transcript(msgs, "openai-chat") == []
    p = only(check_transcript(msgs, "gemini-generate"))
    assert (p.index, p.rule) == (2, "turn_order")
    assert p.message == (
        "the assistant message with tool calls follows an assistant message; gemini-generate "
        "wants a function-call turn directly after a user turn or a function-response turn"
    )
    assert p.fix == (
        "insert a user message before it, or merge it into the assistant message before it"
    )
    first = only(check_transcript([Message(role="system"), calls("a"), results("a")],
                                  "gemini-generate"))
    assert first.rule == "turn_order"
    assert "has no user message before it" in first.message
    # a mid-conversation system message does not break the user -> call adjacency
    ok = [user(), Message(role="system", parts=(TextPart(text="hint"),)), calls("a"),
          results("a")]
    assert check_transcript(ok, "gemini-generate") == []


def test_opaque_parts_are_left_alone() -> None:
    server = OpaquePart(wire="anthropic-messages", kind="server_tool_use", payload={"id": "s1"})
    msgs = [user(), Message(role="assistant", parts=(server, ToolCallPart(id="c1", name="f"))),
            results("c1")]
    assert check_transcript(msgs, "anthropic-messages") == []


# --------------------------------------------------------------------------- generated transcripts


@st.composite
def sound_transcripts(draw: st.DrawFn) -> list[Message]:
    """A user turn, 1-3 rounds of calls and results (maybe a user turn between), then text."""
    msgs = [Message.user(draw(texts))]
    for k in range(draw(st.integers(min_value=1, max_value=3))):
        if k and draw(st.booleans()):
            msgs.append(Message.user(draw(texts)))
        assistant, tool = draw(tool_rounds(text_args=draw(st.booleans())))
        # ids are unique per round; suffix the round so they are unique in the transcript
        assistant = Message(role="assistant", parts=tuple(
            replace(p, id=f"{p.id}_{k}") if isinstance(p, ToolCallPart) else p
            for p in assistant.parts))
        tool = Message(role="tool", parts=tuple(
            replace(p, call_id=f"{p.call_id}_{k}") for p in tool.tool_results))
        msgs += [assistant, tool]
    msgs.append(Message.assistant(draw(texts)))
    return msgs


def tool_indexes(msgs: list[Message]) -> list[int]:
    return [i for i, m in enumerate(msgs) if m.role == "tool"]


def replace_parts(msgs: list[Message], i: int, parts: list[Any]) -> list[Message]:
    out = list(msgs)
    out[i] = Message(role=out[i].role, parts=tuple(parts))
    return out


def check_drop(msgs: list[Message], data: st.DataObject, wire: Any) -> None:
    t = data.draw(st.sampled_from(tool_indexes(msgs)))
    parts = list(msgs[t].tool_results)
    dropped = parts.pop(data.draw(st.integers(0, len(parts) - 1)))
    problems = check_transcript(replace_parts(msgs, t, parts), wire)
    assert any(p.rule == "missing_result" and p.index == t - 1
               and f"call {dropped.call_id!r}" in p.message for p in problems), problems


def check_duplicate(msgs: list[Message], data: st.DataObject, wire: Any) -> None:
    t = data.draw(st.sampled_from(tool_indexes(msgs)))
    parts = list(msgs[t].tool_results)
    copy = data.draw(st.sampled_from(parts))
    parts.insert(data.draw(st.integers(0, len(parts))), copy)
    problems = check_transcript(replace_parts(msgs, t, parts), wire)
    assert any(p.rule == "duplicate_result" and p.index == t
               and f"call {copy.call_id!r}" in p.message for p in problems), problems
    assert not any(p.rule == "missing_result" for p in problems)


def check_move(msgs: list[Message], data: st.DataObject, wire: Any) -> None:
    source = data.draw(st.sampled_from(tool_indexes(msgs)))
    parts = list(msgs[source].tool_results)
    moved = parts.pop(data.draw(st.integers(0, len(parts) - 1)))
    changed = replace_parts(msgs, source, parts)
    # to another round's tool message, or to a new tool message after a later user turn
    targets = [i for i in tool_indexes(msgs) if i != source] + [len(msgs)]
    target = data.draw(st.sampled_from(targets))
    if target == len(msgs):
        changed += [Message.user("and?"), Message(role="tool", parts=(moved,))]
        target += 1
    else:
        changed = replace_parts(changed, target, [*changed[target].parts, moved])
    problems = check_transcript(changed, wire)
    expected = "misplaced_result" if target > source else "result_before_call"
    assert any(p.rule == expected and p.index == target and p.severity == "error"
               and f"call {moved.call_id!r}" in p.message for p in problems), problems


@settings(max_examples=150, deadline=None)
@given(sound_transcripts(), st.data())
def test_generated_transcripts(msgs: list[Message], data: st.DataObject) -> None:
    """Sound as generated for every wire; dropping, duplicating or moving one result is caught."""
    for wire in [None, *WIRES]:
        assert check_transcript(msgs, wire) == []
    wire = data.draw(st.sampled_from([None, *WIRES]))
    check_drop(msgs, data, wire)
    check_duplicate(msgs, data, wire)
    check_move(msgs, data, wire)


# --------------------------------------------------------------------------- edges


def rules(problems: list[Problem]) -> list[tuple[int, str]]:
    return [(p.index, p.rule) for p in problems]


def test_a_call_and_its_result_in_the_same_message() -> None:
    both = Message(role="assistant", parts=(
        ToolCallPart(id="c1", name="f", arguments={}), ToolResultPart(call_id="c1", content="ok"),
    ))
    problems = check_transcript([user(), both])
    assert rules(problems) == [(1, "result_outside_tool"), (1, "result_before_call")]
    assert problems[1].message == "the result for call 'c1' (f) comes before the call " \
        "(made in message 1)"


def test_a_transcript_that_starts_with_an_assistant_message() -> None:
    problems = check_transcript([calls("c1", "c2"), results("c1")], "gemini-generate")
    assert rules(problems) == [(0, "turn_order"), (0, "missing_result"), (1, "result_count")]
    assert problems[0].message.startswith(
        "the assistant message with tool calls has no user message before it; "
    )
    problems = check_transcript([Message.assistant("hi"), calls("c1"), results("c1")],
                                "gemini-generate")
    assert rules(problems) == [(1, "turn_order")]
    assert problems[0].message.startswith(
        "the assistant message with tool calls follows an assistant message; "
    )
    problems = check_transcript([calls("c1"), Message(role="tool", parts=(TextPart(text="x"),))])
    assert rules(problems) == [(0, "missing_result"), (1, "empty_tool_message")]
    assert problems[1].fix == "put the results for the calls of message 0 in it"


def test_a_transcript_that_starts_with_a_tool_message() -> None:
    problems = check_transcript([results("c0"), user(), calls("c1", "c2")], "gemini-generate")
    assert rules(problems) == [(0, "orphan_result"), (2, "missing_result"), (2, "missing_result")]
    empty = Message(role="tool", parts=(TextPart(text="x"),))
    problems = check_transcript([empty, user(), calls("c1")])
    assert rules(problems) == [(0, "empty_tool_message"), (2, "missing_result")]
    assert problems[0].fix == "remove it"


def test_duplicate_call_ids_when_a_wire_is_given() -> None:
    msgs = [user(), calls("c1:read", "c1:grep"), results("c1", "c1")]
    for wire in WIRES:
        problems = check_transcript(msgs, wire)
        assert rules(problems)[:1] == [(1, "duplicate_call_id")], wire
        assert problems[0].message == (
            "call id 'c1' (grep) is used again; a call in message 1 already has it"
        )


def test_results_outside_a_tool_message_are_not_checked_as_a_batch() -> None:
    holds_result = Message(role="user", parts=(ToolResultPart(call_id="c1", content="ok"),))
    problems = check_transcript([user(), calls("c1", "c2"), holds_result], "gemini-generate")
    assert rules(problems) == [(1, "missing_result"), (2, "result_outside_tool")]
    holds_calls = Message(role="user", parts=(
        ToolCallPart(id="c1", name="f", arguments={}),
        ToolCallPart(id="c2", name="f", arguments={}),
    ))
    problems = check_transcript([holds_calls, results("c1")], "gemini-generate")
    assert rules(problems) == [(0, "call_outside_assistant")] * 2 + [(0, "missing_result")]


def test_shape_problems_stay_when_a_turn_is_checked() -> None:
    stray = Message(role="user", parts=(ToolResultPart(call_id="z", content="ok"),))
    problems = check_transcript([stray, calls("c1"), results("c1")], "gemini-generate")
    assert rules(problems) == [(0, "result_outside_tool"), (0, "orphan_result")]


def test_reasoning_in_a_tool_message_says_where_it_goes() -> None:
    tool_msg = Message(role="tool", parts=(
        ToolResultPart(call_id="c1", content="ok"), ReasoningPart(text="hm"),
    ))
    p = only(check_transcript([user(), calls("c1"), tool_msg]))
    assert str(p) == (
        "message 2: error [unexpected_part] a tool message holds a reasoning part; a tool "
        "message carries results (and text after them). Fix: move the reasoning into the "
        "assistant message it belongs to."
    )


def test_missing_result_names_the_next_message() -> None:
    p = only(check_transcript([user(), calls("c1"), Message.assistant("so")]))
    assert p.message == "call 'c1' (f) has no result: the next message is a assistant message"


def test_a_raw_body_is_held_to_its_wires_own_call_rules_as_well() -> None:
    """`check_request` checks the transcript it reads with the wire's own rules (ids, names),
    not only with the rules every wire shares."""
    from toolwire.codecs import get_codec
    from toolwire.rules import check_request

    body = {"model": "claude-x", "max_tokens": 10, "tools": [
        {"name": "look", "input_schema": {"type": "object"}}], "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "call.1", "name": "look", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call.1", "content": "x"}]}]}
    found = check_request(body, "anthropic-messages")
    assert [(p.index, p.rule) for p in found] == [(1, "refused"), (1, "bad_call_id")]
    assert found[1].message == ("anthropic-messages rejects call 'call.1' (look): an id may "
                                "hold only letters, digits, '_' and '-'")
    read = get_codec("anthropic-messages").decode_request(body)
    assert check_transcript(read.messages) == []  # the shared rules alone find nothing
