"""validate_call: what passes, and the exact text a model gets back for every kind of mistake."""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import ToolCallError
from toolwire.schema.tool import Tool, Toolset, validate_call
from toolwire.schema.validate import _may_not_be_finite

EDIT = Tool(
    name="edit_file",
    description="Replace text in a file.",
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "examples": ["a.py"]},
            "old": {"type": "string"},
            "new": {"type": "string"},
            "count": {"type": "integer", "minimum": 1},
            "mode": {"enum": ["replace", "append"]},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
            "opts": {
                "type": "object",
                "properties": {
                    "dry": {"type": "boolean"},
                    "encoding": {"type": "string", "pattern": "^[a-z0-9-]+$"},
                },
            },
        },
        "required": ["path", "old", "new"],
    },
)
EXAMPLE = '{"path": "a.py", "old": "...", "new": "..."}'
TOOLS = Toolset([EDIT, Tool(name="read_file"), Tool(name="math.sum")])
OK = {"path": "a.py", "old": "x", "new": "y"}


def failure(arguments: Any, name: str = "edit_file", tools: Any = TOOLS) -> ToolCallError:
    with pytest.raises(ToolCallError) as caught:
        validate_call(tools, name, arguments)
    return caught.value


# -- what passes ----------------------------------------------------------------------------------


def test_valid_text_and_parsed_objects_pass() -> None:
    assert validate_call(TOOLS, "edit_file", '{"path": "a.py", "old": "x", "new": "y"}') == OK
    assert validate_call(TOOLS, "edit_file", b'{"path": "a.py", "old": "x", "new": "y"}') == OK
    assert validate_call(TOOLS, "edit_file", MappingProxyType(OK)) == OK
    parsed = dict(OK)
    assert validate_call(TOOLS, "edit_file", parsed) is parsed


def test_big_integers_keep_every_digit() -> None:
    tool = Tool(name="t", input_schema={"properties": {"id": {"type": "integer"}}})
    for big in (2**64, -(2**63) - 1, 10**30):
        assert validate_call([tool], "t", f'{{"id": {big}}}') == {"id": big}


@pytest.mark.parametrize("empty", ["", None, "  \n"])
def test_empty_arguments_mean_an_empty_object(empty: Any) -> None:
    assert validate_call(TOOLS, "read_file", empty) == {}


# -- unknown tool ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "edit",
            'Unknown tool "edit". Did you mean "edit_file"? '
            'Available tools: "edit_file", "read_file", "math.sum".',
        ),
        (
            "Math_Sum",
            'Unknown tool "Math_Sum". Did you mean "math.sum"? '
            'Available tools: "edit_file", "read_file", "math.sum".',
        ),
        (
            "raed_file",
            'Unknown tool "raed_file". Did you mean "read_file"? '
            'Available tools: "edit_file", "read_file", "math.sum".',
        ),
        ("zzz", 'Unknown tool "zzz". Available tools: "edit_file", "read_file", "math.sum".'),
    ],
)
def test_unknown_tool(name: str, message: str) -> None:
    error = failure("{}", name)
    assert (error.kind, error.tool, str(error)) == ("unknown_tool", name, message)


def test_unknown_tool_when_there_are_none() -> None:
    assert str(failure("{}", "x", [])) == 'Unknown tool "x". No tools are available.'
    assert str(failure("{}", None, [])) == 'Unknown tool "None". No tools are available.'


# -- not JSON, not an object ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        (
            '{"path": "a.py" "old": "x"}',
            'expecting \',\' delimiter at line 1, column 17, just after `{"path": "a.py" `',
        ),
        (
            '{"path": "a.py", "old": "x"',
            "expecting ',' delimiter at the end (line 1, column 28): the text stops early",
        ),
        (
            '{"path": "a.py", "old": "unfinished',
            "a string is not closed; it starts at line 1, column 25, "
            'just after `{"path": "a.py", "old": `',
        ),
        (
            "{'path': 'a.py'}",
            "expecting property name enclosed in double quotes at line 1, column 2, just after `{`",
        ),
        (
            '{"path": "a.py", "old": "x", "new": "y"} trailing',
            'extra data at line 1, column 42, just after `….py", "old": "x", "new": "y"} `',
        ),
        ("path=a.py", "expecting value at line 1, column 1"),
        ('{"count": NaN}', "NaN is not a JSON value"),
        ('{"count": -Infinity}', "-Infinity is not a JSON value"),
        ('{"count": 1e400}', "the number 1e400 is too large for JSON"),
        ('{"count": 1E+400}', "the number 1E+400 is too large for JSON"),
        ('{"count": [-2.5e0999]}', "the number -2.5e0999 is too large for JSON"),
    ],
)
def test_invalid_json_says_where_it_broke_and_shows_an_example(text: str, detail: str) -> None:
    error = failure(text)
    assert error.kind == "invalid_json" and error.problems == (detail,)
    assert str(error) == (
        f'Arguments for tool "edit_file" are not valid JSON: {detail}. '
        f"Send a JSON object like {EXAMPLE}."
    )


@pytest.mark.parametrize(
    ("arguments", "what"),
    [
        ("[1, 2]", "an array"),
        ("null", "null"),
        ("42", "42"),
        ('"a.py"', 'the string "a.py"'),
        (
            '"{\\"path\\": \\"a.py\\"}"',
            "a string holding JSON (send the object itself, not a string)",
        ),
        ([1], "an array"),
        (3.5, "3.5"),
    ],
)
def test_not_an_object(arguments: Any, what: str) -> None:
    error = failure(arguments)
    assert error.kind == "not_an_object"
    assert str(error) == (
        f'Arguments for tool "edit_file" must be a JSON object, got {what}. '
        f"Send a JSON object like {EXAMPLE}."
    )


def test_bytes_that_are_not_text() -> None:
    error = failure(b"\xff\xfe")
    assert error.kind == "invalid_json"
    assert str(error) == (
        'Arguments for tool "edit_file" are not valid JSON: the bytes are not UTF-8 text. '
        f"Send a JSON object like {EXAMPLE}."
    )


def test_examples_are_built_from_the_schema() -> None:
    tool = Tool(
        name="t",
        input_schema={
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 5},
                "when": {"type": "string", "format": "date"},
                "kind": {"const": "x"},
                "items": {"type": "array", "items": {"type": "boolean"}},
                "at": {
                    "type": "object",
                    "properties": {"x": {"type": "number"}},
                    "required": ["x"],
                },
                "maybe": {"anyOf": [{"type": "null"}, {"type": "string", "enum": ["a", "b"]}]},
            },
            "required": ["n", "when", "kind", "items", "at", "maybe"],
        },
    )
    message = str(failure("[]", "t", [tool]))
    example = (
        '{"n": 5, "when": "2024-01-01", "kind": "x", "items": [true], "at": {"x": 0}, "maybe": "a"}'
    )
    assert message.endswith(f"Send a JSON object like {example}.")
    assert tool.validate(example)


# -- schema violations ----------------------------------------------------------------------------


def test_every_violation_is_listed_with_its_path() -> None:
    error = failure(
        {
            "path": ["a.py"],
            "old": "x",
            "count": 0,
            "mode": "prepend",
            "tags": ["a", 2, "c"],
            "opts": {"dry": "yes", "encoding": "UTF 8"},
        }
    )
    assert error.kind == "schema" and error.tool == "edit_file"
    assert str(error) == (
        'Invalid arguments for tool "edit_file":\n'
        '- "count": got 0, want an integer >= 1\n'
        '- "mode": got "prepend", want one of "replace", "append"\n'
        '- "new": missing, want a string\n'
        '- "opts.dry": got "yes", want a boolean\n'
        '- "opts.encoding": got "UTF 8", want a string matching ^[a-z0-9-]+$\n'
        '- "path": got an array, want a string\n'
        '- "tags": got 3 items, want at most 2\n'
        '- "tags[1]": got 2, want a string'
    )
    assert error.problems[0] == '"count": got 0, want an integer >= 1'
    assert len(error.problems) == 8


CHECKS = Tool(
    name="checks",
    input_schema={
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 2, "maxLength": 4},
            "ratio": {"type": ["number", "null"], "exclusiveMaximum": 1, "multipleOf": 0.25},
            "when": {"type": "string", "format": "date"},
            "ids": {"type": "array", "uniqueItems": True, "minItems": 1},
            "pair": {"type": "array", "prefixItems": [{"type": "string"}], "items": False},
            "k": {"const": 3},
            "not_text": {"not": {"type": "string"}},
            "meta": {"type": "object", "minProperties": 1, "propertyNames": {"pattern": "^x"}},
            "size": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "list": {"type": "array", "items": {"type": "integer"}},
            "shape": {
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}},
                        "required": ["kind", "r"],
                    },
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "square"}, "side": {"type": "number"}},
                        "required": ["kind", "side"],
                    },
                ]
            },
        },
    },
)


@pytest.mark.parametrize(
    ("arguments", "line"),
    [
        ({"name": "x"}, '"name": got "x" (1 character), want at least 2 characters'),
        ({"name": "abcde"}, '"name": got "abcde" (5 characters), want at most 4 characters'),
        ({"ratio": 1}, '"ratio": got 1, want a number < 1'),
        ({"ratio": 0.3}, '"ratio": got 0.3, want a multiple of 0.25'),
        ({"ratio": "half"}, '"ratio": got "half", want a number or null'),
        ({"when": "tomorrow"}, '"when": got "tomorrow", want a date string'),
        ({"ids": [1, 1]}, '"ids": got repeated items, want each item once'),
        ({"ids": []}, '"ids": got 0 items, want at least 1'),
        ({"pair": ["a", "b"]}, '"pair[1]": not allowed here'),
        ({"k": 4}, '"k": got 4, want exactly 3'),
        ({"not_text": "s"}, '"not_text": got "s", which is not allowed here'),
        ({"meta": {}}, '"meta": got 0 fields, want at least 1'),
        ({"meta": {"y": 1}}, '"meta": field name "y" is not allowed: "y" does not match "^x"'),
        ({"size": "big"}, '"size": got "big", want an integer or null'),
        ({"list": {"a": 1}}, '"list": got an object, want an array of integers'),
        ({"shape": 5}, '"shape": got 5, want an object'),
        ({"shape": {"kind": "circle", "r": "big"}}, '"shape.r": got "big", want a number'),
        ({"shape": {"kind": "hex"}}, '"shape.kind": got "hex", want one of "circle", "square"'),
    ],
)
def test_each_keyword_reads_plainly(arguments: dict[str, Any], line: str) -> None:
    error = failure(arguments, "checks", [CHECKS])
    assert error.kind == "schema"
    assert str(error) == f'Invalid arguments for tool "checks":\n- {line}'


def test_a_union_reports_the_branch_the_value_aimed_at() -> None:
    error = failure({"shape": {"kind": "square", "radius": 1}}, "checks", [CHECKS])
    assert str(error) == (
        'Invalid arguments for tool "checks":\n'
        '- "shape.radius": unknown field\n'
        '- "shape.side": missing, want a number\n'
        'Allowed fields in "shape": "kind", "side".'
    )


def test_long_lists_of_problems_are_cut() -> None:
    many = Tool(
        name="many",
        input_schema={
            "type": "object",
            "properties": {f"f{i}": {"type": "integer"} for i in range(14)},
        },
    )
    error = failure({f"f{i}": "x" for i in range(14)}, "many", [many])
    lines = str(error).splitlines()
    assert len(lines) == 12 and lines[-1] == "- … and 4 more problems"
    assert len(error.problems) == 14


def test_values_json_cannot_carry() -> None:
    error = failure({"path": "a", "old": "b", "new": {1, 2}})
    assert (error.kind, str(error)) == (
        "schema",
        'Invalid arguments for tool "edit_file": '
        "they hold a value JSON cannot carry (Unsupported type: 'set').",
    )


# -- unknown fields -------------------------------------------------------------------------------


def test_unknown_field_suggests_the_nearest_and_lists_the_allowed() -> None:
    error = failure({"path": "a.py", "old_str": "x", "new": "y"})
    assert error.kind == "schema"  # a missing field too
    assert str(error) == (
        'Invalid arguments for tool "edit_file":\n'
        '- "old": missing, want a string\n'
        '- "old_str": unknown field; did you mean "old"?\n'
        'Allowed fields: "path", "old", "new", "count", "mode", "tags", "opts".'
    )


def test_only_unknown_fields_is_its_own_kind() -> None:
    error = failure({**OK, "Count": 2, "dry_run": True, "opts": {"dyr": True}})
    assert error.kind == "unknown_field"
    assert str(error) == (
        'Invalid arguments for tool "edit_file":\n'
        '- "Count": unknown field; did you mean "count"?\n'
        '- "dry_run": unknown field\n'
        '- "opts.dyr": unknown field; did you mean "dry"?\n'
        'Allowed fields: "path", "old", "new", "count", "mode", "tags", "opts".\n'
        'Allowed fields in "opts": "dry", "encoding".'
    )


def test_a_field_already_sent_is_not_suggested() -> None:
    error = failure({**OK, "Path": "b.py"})
    assert error.problems == ('"Path": unknown field',)


def test_a_tool_without_arguments() -> None:
    error = failure('{"verbose": true}', "read_file")
    assert (error.kind, str(error)) == (
        "unknown_field",
        'Invalid arguments for tool "read_file":\n'
        '- "verbose": unknown field\n'
        "This tool takes no arguments: send {}.",
    )


def test_a_free_form_map_takes_any_field() -> None:
    tool = Tool(
        name="env",
        input_schema={"type": "object", "properties": {"vars": {"type": "object"}}},
    )
    assert validate_call([tool], "env", {"vars": {"ANY": 1}}) == {"vars": {"ANY": 1}}


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet='eE+-0123456789."NaIfinity ', max_size=40))
def test_the_text_test_for_huge_numbers_misses_nothing(text: str) -> None:
    # the cheap test must say "maybe" wherever an exponent of three digits or more appears
    suspect = "NaN" in text or "Infinity" in text or re.search(r"[eE]\+?\d{3}", text)
    assert _may_not_be_finite(text) == bool(suspect)


_NUMBERS = ["NaN", "-Infinity", "Infinity", "1e400", "1E400", "2e+999", "3E+310", "9" * 310,
            "9" * 310 + ".5", "1.5", "0", "true"]


@settings(max_examples=400)
@given(st.lists(st.sampled_from(_NUMBERS), min_size=1, max_size=3),
       st.sampled_from(["", "x", " x", "}", ", ]", "]]"]))
def test_a_failure_found_before_is_worded_as_reading_the_text_again_words_it(
        values: list[str], tail: str) -> None:
    """`Checker.check_broken` raises the error the full read gives, or leaves the text to it:
    it never words a text whose numbers the full read refuses before the break by the break."""
    import contextlib
    import json

    from toolwire._json import read_arguments
    from toolwire.schema.validate import Checker

    text = "[" + ", ".join(values) + tail
    with contextlib.suppress(json.JSONDecodeError):
        read_arguments(text)  # what a wire's decoder does first, remembering the failure
    checker = Checker("t", {"type": "array"})
    with pytest.raises(ToolCallError) as again:
        checker.check(text)
    try:
        checker.check_broken(text)
    except ToolCallError as exc:
        assert str(exc) == str(again.value)
