"""The typed readers every wire reads bodies with (`toolwire.codecs.reading`), word for word:
what each gives for a value of the right shape, for a missing one, and the error naming the
place and what came for any other; `plain`'s copy and its refusals, with and without the room
to recurse; and the refusals of a raw body that every wire words alike."""

from __future__ import annotations

import enum
import math
import sys
from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire._json import MAX_DEPTH
from toolwire.codecs.reading import (
    error_body,
    first_problem,
    is_unicode,
    list_at,
    not_json,
    objects_at,
    path_text,
    plain,
    role_problem,
    text_at,
    token_count,
    tools_lack_schemas,
    wrong_shape,
)
from toolwire.errors import WireFormatError


@pytest.mark.parametrize(("value", "kind"), [
    (None, "null"), (True, "a boolean"), (False, "a boolean"), ({}, "an object"),
    ([], "a list"), ("", "a string"), (3, "an integer"), (2.5, "a number"),
    (b"x", "bytes"), ((1,), "tuple"),
])
def test_a_wrong_shape_names_the_place_what_was_expected_and_what_came(
        value: Any, kind: str) -> None:
    error = wrong_shape("choices[0].message", "a list", value)
    assert isinstance(error, WireFormatError)
    assert str(error) == f"choices[0].message: expected a list, got {kind}"


@pytest.mark.parametrize(("where", "text"), [
    ("as.it.is", "as.it.is"),
    (("choices", 0, "message"), "choices[0].message"),
    ((0, "text"), "[0].text"),
    (("output", 2, 3), "output[2][3]"),
    ((), ""),
])
def test_a_path_is_written_as_a_reader_would_look_it_up(where: Any, text: str) -> None:
    assert path_text(where) == text


def test_list_at_gives_the_list_itself_nothing_for_none_and_names_anything_else() -> None:
    items = [1, 2]
    assert list_at(items, "a") is items
    assert list_at(None, "a") == []
    with pytest.raises(WireFormatError, match=r"^output\[2\]\.summary: expected a list, got "
                                              r"tuple$"):
        list_at((1,), ("output", 2, "summary"))
    with pytest.raises(WireFormatError, match=r"^x: expected a list, got an object$"):
        list_at({}, "x")


def test_objects_at_names_the_item_that_is_not_an_object() -> None:
    assert objects_at([{}, MappingProxyType({"a": 1})], "tools", "a tool")[1]["a"] == 1
    assert objects_at(None, "tools", "a tool") == []
    with pytest.raises(WireFormatError) as caught:
        objects_at([{}, 7], "tools", "a tool")
    assert str(caught.value) == "tools[1]: expected an object (a tool), got an integer"
    with pytest.raises(WireFormatError) as whole:
        objects_at({"name": "f"}, "tools", "a tool")
    assert str(whole.value) == "tools: expected a list, got an object"


def test_text_at_gives_text_empty_for_none_and_names_anything_else() -> None:
    assert text_at("hi", "a") == "hi"
    assert text_at(None, "a") == ""
    with pytest.raises(WireFormatError) as caught:
        text_at(5, ("content", 1))
    assert str(caught.value) == "content[1]: expected text, got an integer"


@pytest.mark.parametrize(("value", "count"), [
    (5, 5), (0, 0), (True, 0), (False, 0), ("5", 0), (2.0, 0), (None, 0),
])
def test_a_token_count_is_an_integer_and_nothing_else(value: Any, count: int) -> None:
    assert token_count(value) == count


class Color(enum.IntEnum):
    RED = 1


class Word(str):
    pass


def test_plain_copies_into_dicts_lists_and_json_scalars() -> None:
    value = {"a": (1, 2.5, None, True), 3: MappingProxyType({"b": "c"}), "w": Word("x"),
             "e": Color.RED}
    copied = plain(value)
    assert copied == {"a": [1, 2.5, None, True], "3": {"b": "c"}, "w": "x", "e": 1}
    assert type(copied) is dict and type(copied["a"]) is list and type(copied["3"]) is dict
    assert list(copied) == ["a", "3", "w", "e"]
    inner = {"k": [1]}
    again = plain({"x": inner})
    assert again == {"x": inner} and again["x"] is not inner and again["x"]["k"] is not inner["k"]


@pytest.mark.parametrize(("value", "message"), [
    ({"a": [1, math.nan]}, "choices[0]: a[1]: expected a finite number, got nan"),
    ({"a": math.inf}, "choices[0]: a: expected a finite number, got inf"),
    ({True: 1}, "choices[0]: the value: expected text keys, got True"),
    ({(1,): 1}, "choices[0]: the value: expected text keys, got (1,)"),
    ({"a": {"b": b"raw"}}, "choices[0]: a.b: expected a JSON value, got bytes"),
    ({"a": object}, "choices[0]: a: expected a JSON value, got type"),
])
def test_plain_refuses_what_json_cannot_hold_and_says_where(value: Any, message: str) -> None:
    with pytest.raises(WireFormatError) as caught:
        plain(value, ("choices", 0))
    assert str(caught.value) == message


def _nested(levels: int) -> Any:
    value: Any = "end"
    for n in range(levels):
        value = {"k": value} if n % 2 else [value]
    return value


def test_plain_takes_nesting_to_the_limit_and_refuses_one_level_more() -> None:
    deepest = _nested(MAX_DEPTH)
    assert plain(deepest) == deepest
    with pytest.raises(WireFormatError, match=f"nested deeper than {MAX_DEPTH} levels"):
        plain(_nested(MAX_DEPTH + 1), "body")


def test_plain_names_a_place_by_its_default_when_none_is_given() -> None:
    with pytest.raises(WireFormatError, match=r"^a value: the value: expected a finite number"):
        plain(math.nan)


@pytest.fixture
def little_stack() -> Iterator[None]:
    """Too little room to recurse through a value nested a few hundred levels: `plain` goes
    on without recursion."""
    was = sys.getrecursionlimit()
    sys.setrecursionlimit(150)
    try:
        yield
    finally:
        sys.setrecursionlimit(was)


@pytest.fixture
def big_stack() -> Iterator[None]:
    """Room to recurse through a value nested past `MAX_DEPTH`: `plain`'s own depth count,
    not the interpreter's limit, decides."""
    was = sys.getrecursionlimit()
    sys.setrecursionlimit(max(was, 6 * MAX_DEPTH))
    try:
        yield
    finally:
        sys.setrecursionlimit(was)


def test_with_room_to_recurse_plain_counts_the_levels_itself(big_stack: None) -> None:
    for levels in (MAX_DEPTH - 1, MAX_DEPTH):
        for start in ([], {}):
            value = _nested(levels) if not start else {"k": _nested(levels - 1)}
            assert plain(value) == value
    for value in (_nested(MAX_DEPTH + 1), {"k": _nested(MAX_DEPTH)}):
        with pytest.raises(WireFormatError, match=f"nested deeper than {MAX_DEPTH} levels"):
            plain(value, "body")


def test_without_room_to_recurse_plain_copies_the_same(little_stack: None) -> None:
    value = {"a": _nested(300), 7: (MappingProxyType({"z": 1, "y": [2.5, None]}),), "t": True,
             "w": Word("x"), "e": Color.RED, "d": (_nested(300),),
             "m": MappingProxyType({"deep": _nested(300)})}
    copied = plain(value)
    sys.setrecursionlimit(2000)
    assert copied == {"a": _nested(300), "7": [{"z": 1, "y": [2.5, None]}], "t": True,
                      "w": "x", "e": 1, "d": [_nested(300)], "m": {"deep": _nested(300)}}
    assert list(copied) == ["a", "7", "t", "w", "e", "d", "m"]
    assert list(copied["7"][0]) == ["z", "y"]
    assert type(copied["7"]) is list and type(copied["7"][0]) is dict


def test_without_room_to_recurse_plain_keeps_every_refusal(little_stack: None) -> None:
    for value, found in ((_nested(MAX_DEPTH + 1), f"nested deeper than {MAX_DEPTH} levels"),
                         ([_nested(300), {False: 1}], "expected text keys, got False"),
                         ([_nested(300), [math.nan]], "expected a finite number, got nan"),
                         ([_nested(300), b"raw"], "expected a JSON value, got bytes")):
        with pytest.raises(WireFormatError, match=found):
            plain(value, "body")


def test_not_json_names_the_first_problem_else_the_value_as_a_whole() -> None:
    assert str(not_json("w", [1, math.inf])) == "w: [1]: expected a finite number, got inf"
    assert str(not_json("w", [1, 2])) == "w: not a JSON value"


def test_first_problem_is_none_for_plain_json_and_shortens_a_long_path() -> None:
    assert first_problem("w", {"a": [1, 2.5, None, "x", True, {"b": {}}]}) is None
    key = "k" * 30
    value: Any = math.nan
    for _ in range(6):
        value = {key: value}
    found = str(first_problem("w", value))
    at = ".".join([key] * 6)
    assert found == f"w: {at[:60]}...{at[-40:]}: expected a finite number, got nan"
    short = {"a": {"b": math.nan}}
    assert str(first_problem("w", short)) == "w: a.b: expected a finite number, got nan"


def test_first_problem_names_a_lone_surrogate_which_plain_keeps_as_text() -> None:
    assert str(first_problem("w", ["ok", "\ud800"])) == (
        "w: [1]: text holding a lone surrogate, which is no character (JSON read by toolwire "
        "has U+FFFD there)")
    assert plain(["\ud800"]) == ["\ud800"]


def test_first_problem_counts_levels_from_the_top(big_stack: None) -> None:
    for levels in (MAX_DEPTH, MAX_DEPTH - 1):
        assert first_problem("w", _nested(levels)) is None
        assert first_problem("w", {"k": _nested(levels - 1)}) is None
    assert "nested deeper than" in str(first_problem("w", _nested(MAX_DEPTH + 1)))
    assert "nested deeper than" in str(first_problem("w", {"k": _nested(MAX_DEPTH)}))


def test_first_problem_shortens_a_path_only_past_120_characters() -> None:
    for length, shortened in ((120, False), (121, True)):
        key = "k" * (length - 3)
        found = str(first_problem("w", {key: [math.nan]}))
        at = f"{key}[0]"
        assert len(at) == length
        assert found == (f"w: {at[:60]}...{at[-40:]}: expected a finite number, got nan"
                         if shortened else f"w: {at}: expected a finite number, got nan")


def test_first_problem_reads_integer_keys_and_walks_lists_by_index() -> None:
    assert str(first_problem("w", {1: [0, {"x": math.nan}]})) == (
        "w: 1[1].x: expected a finite number, got nan")


@given(st.text())
def test_text_is_unicode_unless_it_holds_a_lone_surrogate(text: str) -> None:
    assert is_unicode(text) is not any(0xD800 <= ord(c) <= 0xDFFF for c in text)


@pytest.mark.parametrize(("body", "parsed", "text"), [
    (b'{"error": "x"}', {"error": "x"}, '{"error": "x"}'),
    (bytearray(b"[1]"), [1], "[1]"),
    (memoryview(b"null"), None, "null"),
    ('{"a": 1}', {"a": 1}, '{"a": 1}'),
    ("Bad gateway", "Bad gateway", "Bad gateway"),
    (b"\xffbroken", "\ufffdbroken", "\ufffdbroken"),
    ({"error": (1, 2)}, {"error": [1, 2]}, ""),
    (None, None, ""),
])
def test_an_error_body_is_json_when_it_is_and_its_text(
        body: Any, parsed: Any, text: str) -> None:
    assert error_body(body) == (parsed, text)


def test_an_error_body_that_is_a_value_but_not_json_is_refused_by_name() -> None:
    with pytest.raises(WireFormatError, match=r"^the error body: a: expected a finite number"):
        error_body({"a": math.nan})


@pytest.mark.parametrize(("tools", "key", "problem"), [
    (None, "parameters", None),
    ({"a": 1}, "parameters", "tools: expected an array"),
    ([{"name": "f", "parameters": {}}], "parameters", None),
    ([{"name": "f"}], "parameters", "tools.0.parameters: Field required"),
    ([{"name": "f"}], "", None),
    ([{"parameters": {}}], "parameters", "tools.0: a tool needs a name"),
    ([{"name": ""}], "parameters", "tools.0: a tool needs a name"),
    (["f"], "parameters", "tools.0: a tool needs a name"),
    ([{"type": "function", "function": {"name": "f", "parameters": {}}}], "parameters", None),
    ([{"name": "g", "parameters": {}}, {"type": "function", "function": {"name": "f"}}],
     "parameters", "tools.1.parameters: Field required"),
    ([{"type": "function", "function": "f"}], "parameters", "tools.0: a tool needs a name"),
    ([{"type": "custom", "custom": {"name": "c"}}], "parameters", None),
    ([{"type": "custom", "name": "c"}], "input_schema", "tools.0.input_schema: Field required"),
    ([{"type": "custom", "custom": {}}], "parameters", "tools.0: a tool needs a name"),
    ([{"type": "web_search"}], "parameters", None),
    ([{"type": "bash_20250124", "name": "bash"}], "input_schema", None),
])
def test_a_tool_list_is_refused_for_a_tool_without_a_name_or_its_schema(
        tools: Any, key: str, problem: str | None) -> None:
    assert tools_lack_schemas(tools, key) == problem


@pytest.mark.parametrize(("messages", "field", "problem"), [
    (None, "messages", "messages: at least one message is required"),
    ([], "contents", "contents: at least one message is required"),
    ({"role": "user"}, "messages", "messages: at least one message is required"),
    ([{"role": "user"}, "hi"], "messages",
     "messages.1: Input should be a valid dictionary or object"),
    ([{"role": "user"}, {"role": "tool"}], "messages",
     "messages.1.role: Input should be 'user' or 'assistant', got 'tool'"),
    ([{"role": "user"}, {"content": "no role"}], "messages", None),
    ([{"role": "assistant"}], "messages", None),
])
def test_a_message_list_is_refused_when_empty_or_for_a_role_the_wire_has_not(
        messages: Any, field: str, problem: str | None) -> None:
    assert role_problem(messages, ("user", "assistant"), field) == problem


def test_the_field_of_a_message_list_is_messages_unless_named() -> None:
    assert role_problem([], ("user",)) == "messages: at least one message is required"
    assert role_problem([{"role": "x"}], ("user",)) == (
        "messages.0.role: Input should be 'user', got 'x'")
