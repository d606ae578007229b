"""The rarer messages of argument checking, each pinned: the keywords few schemas use, where
broken text broke, refused schemas, and the checker's cheap tests on text and values."""

from __future__ import annotations

import math
from typing import Any

import pytest

from toolwire.errors import ToolCallError, ToolDefinitionError
from toolwire.schema.tool import Tool, validate_call
from toolwire.schema.validate import _holds_more_than, _may_not_be_finite, _not_finite


def plain() -> Tool:
    """Built in each test: building a tool compiles its check, which is under test too."""
    return Tool(name="t", input_schema={"properties": {"a": {"type": "string"}}})


def failure(tool: Tool, arguments: Any, name: str | None = None) -> ToolCallError:
    with pytest.raises(ToolCallError) as caught:
        validate_call([tool], tool.name if name is None else name, arguments)
    return caught.value


def shows_no_chained_error(error: BaseException) -> bool:
    return error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)


def lines(schema: dict[str, Any], arguments: Any) -> str:
    return str(failure(Tool(name="t", input_schema=schema), arguments))


# -- keywords few schemas use ---------------------------------------------------------------


def test_contains() -> None:
    schema = {"properties": {"xs": {"type": "array", "contains": {"type": "integer"}}}}
    assert lines(schema, {"xs": ["a", "b"]}) == (
        'Invalid arguments for tool "t":\n- "xs": want at least one item that is an integer'
    )


def test_max_and_min_properties() -> None:
    schema = {"properties": {"m": {"type": "object", "maxProperties": 1, "minProperties": 1}}}
    assert lines(schema, {"m": {"a": 1, "b": 2}}) == (
        'Invalid arguments for tool "t":\n- "m": got 2 fields, want at most 1'
    )
    assert lines(schema, {"m": {}}) == (
        'Invalid arguments for tool "t":\n- "m": got 0 fields, want at least 1'
    )


def test_unevaluated_properties() -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}},
              "unevaluatedProperties": False}
    error = failure(Tool(name="t", input_schema=schema), {"nmae": "y"})
    assert (error.kind, str(error)) == (
        "unknown_field",
        'Invalid arguments for tool "t":\n- "nmae": unknown field; did you mean "name"?\n'
        'Allowed fields: "name".',
    )


def test_one_of_with_several_matches() -> None:
    schema = {"properties": {"v": {"oneOf": [{"type": "integer"}, {"type": "number"},
                                             {"type": "string"}]}}}
    assert lines(schema, {"v": 3}) == (
        'Invalid arguments for tool "t":\n'
        '- "v": got 3, which fits more than one of: an integer, a number or a string; want one'
    )


def test_formats_are_checked() -> None:
    schema = {"properties": {"day": {"type": "string", "format": "date"}}}
    assert lines(schema, {"day": "soon"}) == (
        'Invalid arguments for tool "t":\n- "day": got "soon", want a date string'
    )


# -- schemas refused ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "why"),
    [
        ("file:///nowhere/s.json", "Retrieval is disabled, cannot fetch file:///nowhere/s.json"),
        ("other.json", "No base URI is available"),
    ],
)
def test_remote_refs_are_refused(ref: str, why: str) -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        Tool(name="t", input_schema={"properties": {"a": {"$ref": ref}}})
    assert str(caught.value) == (
        f"tool 't': input_schema is not a valid JSON Schema: Resource '{ref}' is not present "
        f"in a registry and retrieving it failed: {why}"
    )


def test_an_invalid_schema_is_named_by_its_first_line() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        Tool(name="t", input_schema={"type": "object", "properties": {"a": {"type": "nope"}}})
    assert str(caught.value) == (
        "tool 't': input_schema is not a valid JSON Schema: \"nope\" is not valid under any "
        "of the schemas listed in the 'anyOf' keyword"
    )


# -- where text broke -----------------------------------------------------------------------


def test_a_control_character_in_a_string() -> None:
    error = failure(plain(), '{"a": "x\ny"}')
    assert error.problems == (
        'invalid control character at line 1, column 9, just after `{"a": "x`',
    )


def test_the_text_before_a_break_is_cut_past_thirty_characters() -> None:
    at_30 = failure(plain(), '{"a": "' + "x" * 21 + '" "b": 1}')
    assert at_30.problems == (
        "expecting ',' delimiter at line 1, column 31, just after "
        '`{"a": "xxxxxxxxxxxxxxxxxxxxx" `',
    )
    at_31 = failure(plain(), '{"a": "' + "x" * 22 + '" "b": 1}')
    assert at_31.problems == (
        "expecting ',' delimiter at line 1, column 32, just after "
        '`…"a": "xxxxxxxxxxxxxxxxxxxxxx" `',
    )


def test_bytes_that_are_not_utf8() -> None:
    error = failure(plain(), b"\xff\xfe")
    assert (error.kind, error.tool, error.problems) == (
        "invalid_json", "t", ("the bytes are not UTF-8 text",)
    )
    assert shows_no_chained_error(error)


@pytest.mark.parametrize(
    ("arguments", "kind", "problem"),
    [
        ("[1]", "not_an_object", "must be a JSON object, got an array"),
        ("{", "invalid_json", "expecting property name enclosed in double quotes at the end "
                              "(line 1, column 2): the text stops early"),
        ({"a": object()}, "schema", "they hold a value JSON cannot carry "
                                    "(Unsupported type: 'object')"),
        ({1: "a"}, "schema", "they hold a value JSON cannot carry "
                             "(Dict key must be str or str enum. Got 'int')"),
    ],
)
def test_every_error_names_its_tool_and_problems(arguments: Any, kind: str, problem: str) -> None:
    error = failure(plain(), arguments)
    assert (error.kind, error.tool, error.problems) == (kind, "t", (problem,))
    assert shows_no_chained_error(error)


def test_an_unknown_tool_that_is_not_a_string() -> None:
    error = failure(plain(), "{}", name=42)  # type: ignore[arg-type]
    message = 'Unknown tool "42". Available tools: "t".'
    assert (str(error), error.tool, error.problems) == (message, "42", (message,))


# -- what the compiled check passes and refuses ----------------------------------------------


def test_empty_arguments_and_numbers_json_cannot_carry() -> None:
    tool = Tool(name="t", input_schema={"properties": {"n": {"type": ["number", "null"]}}})
    for empty in ("", None, " "):
        assert validate_call([tool], "t", empty) == {}
    assert validate_call([tool], "t", '{"n": 1.5}') == {"n": 1.5}
    for text, detail in [('{"n": NaN, "x": 1}', "NaN is not a JSON value"),
                         ('{"n": 1e999, "x": 1}', "the number 1e999 is too large for JSON")]:
        error = failure(tool, text)
        assert (error.kind, error.problems) == ("invalid_json", (detail,))
    # a parsed object holding NaN is checked as the validator reads it (as null)
    error = failure(Tool(name="t", input_schema={"properties": {"a": {"type": "string"}}}),
                    {"a": math.nan})
    assert (error.kind, error.problems) == ("schema", ('"a": got null, want a string',))


# -- examples in messages -------------------------------------------------------------------


def test_the_example_follows_refs_and_is_cut_at_600_characters() -> None:
    refd = Tool(name="r", input_schema={
        "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer",
                                                                "examples": [7]}},
                        "required": ["x"]}},
        "properties": {"p": {"$ref": "#/$defs/P"}}, "required": ["p"],
    })
    assert str(failure(refd, "nope")).endswith('Send a JSON object like {"p": {"x": 7}}.')
    names = [f"field_number_{i}" for i in range(40)]
    big = Tool(name="big", input_schema={"properties": {n: {"type": "string"} for n in names},
                                         "required": names})
    example = str(failure(big, "nope")).split("Send a JSON object like ", 1)[1][:-1]
    assert len(example) == 600 and example.endswith('"field_num…')


# -- cheap tests ----------------------------------------------------------------------------


def test_long_text_may_hold_a_huge_number() -> None:
    assert not _may_not_be_finite("1" * 200)
    assert _may_not_be_finite("1" * 201)


def test_not_finite_looks_into_objects_and_lists() -> None:
    assert not _not_finite({"a": "NaN", "b": [1, "x", None, True], "c": {"d": 1.5}})
    assert _not_finite({"a": [1, {"b": math.inf}]})
    assert _not_finite([math.nan])
    assert not _not_finite(7)


# -- how problems are reported ----------------------------------------------------------------

REFS = {"$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}},
                        "required": ["x"]}}}


def test_ten_problems_are_all_listed() -> None:
    schema = {"properties": {f"f{i}": {"type": "integer"} for i in range(10)}}
    text = lines(schema, {f"f{i}": "x" for i in range(10)})
    assert text.count("\n- ") == 10 and "more problem" not in text


def test_a_union_with_one_branch_of_the_right_type_explains_that_branch() -> None:
    branch = {"type": "object", "properties": {"kind": {"const": "a"}, "r": {"type": "number"}},
              "required": ["kind", "r"]}
    schema = {"properties": {"v": {"anyOf": [{"type": "string"}, branch]}}}
    assert lines(schema, {"v": {"kind": "b", "r": "x"}}) == (
        'Invalid arguments for tool "t":\n- "v.kind": got "b", want exactly "a"\n'
        '- "v.r": got "x", want a number'
    )


def test_a_union_told_apart_by_an_enum() -> None:
    circle = {"type": "object", "properties": {"kind": {"enum": ["circle", "round"]},
                                               "r": {"type": "number"}}, "required": ["kind"]}
    square = {"type": "object", "properties": {"kind": {"enum": ["square"]}},
              "required": ["kind"]}
    schema = {"properties": {"s": {"anyOf": [circle, square]}}}
    assert lines(schema, {"s": {"kind": "tri"}}) == (
        'Invalid arguments for tool "t":\n'
        '- "s.kind": got "tri", want one of "circle", "round", "square"'
    )


def test_a_union_names_the_field_its_first_branch_checks_first() -> None:
    # the second branch reaches its constants through allOf, in the other order: the field
    # named is still the one the first branch refuses first, with the value it holds
    circle = {"type": "object", "properties": {"kind": {"const": "circle"},
                                               "fill": {"const": "solid"}}}
    square = {"type": "object", "allOf": [{"properties": {"fill": {"const": "hatched"}}},
                                          {"properties": {"kind": {"const": "square"}}}]}
    schema = {"properties": {"shape": {"anyOf": [circle, square]}}}
    assert lines(schema, {"shape": {"kind": "oval", "fill": "none"}}) == (
        'Invalid arguments for tool "t":\n'
        '- "shape.kind": got "oval", want one of "circle", "square"'
    )


@pytest.mark.parametrize(
    "closed",
    [
        {"type": "object", "unevaluatedProperties": False},
        {"type": "object", "patternProperties": {"^y": {}}, "additionalProperties": False},
    ],
)
def test_a_nested_object_that_takes_no_fields(closed: dict[str, Any]) -> None:
    error = failure(Tool(name="t", input_schema={"properties": {"o": closed}}), {"o": {"x": 1}})
    assert (error.kind, str(error)) == (
        "unknown_field",
        'Invalid arguments for tool "t":\n- "o.x": unknown field\n"o" takes no fields: send {}.',
    )


def test_missing_fields_of_objects_without_properties_and_behind_refs() -> None:
    schema = {"properties": {"o": {"type": "object", "required": ["x"]}}}
    assert lines(schema, {"o": {}}) == 'Invalid arguments for tool "t":\n- "o.x": missing'
    schema = {**REFS, "properties": {"p": {"$ref": "#/$defs/P"}}, "required": ["p"]}
    assert lines(schema, {}) == 'Invalid arguments for tool "t":\n- "p": missing, want an object'


def test_what_is_wanted_behind_refs() -> None:
    schema = {**REFS, "properties": {"xs": {"type": "array", "contains": {"$ref": "#/$defs/P"}},
                                     "v": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "string"}]}}}
    assert lines(schema, {"xs": [1], "v": 1}) == (
        'Invalid arguments for tool "t":\n- "v": got 1, want an object or a string\n'
        '- "xs": want at least one item that is an object'
    )


def test_a_keyword_without_its_own_wording_keeps_the_validators() -> None:
    schema = {"properties": {"xs": {"type": "array", "prefixItems": [{"type": "integer"}],
                                    "unevaluatedItems": False}}}
    assert lines(schema, {"xs": [1, 2]}) == (
        'Invalid arguments for tool "t":\n'
        "- \"xs\": Unevaluated items are not allowed ('2' was unexpected)"
    )


def test_values_are_counted_level_by_level_up_to_the_bound() -> None:
    # every object and array counts, as does every scalar in them
    assert not _holds_more_than([0] * 1999, 2000)  # 2000 values with the list
    assert _holds_more_than([0] * 2000, 2000)
    assert _holds_more_than([[0] * 1000, [0] * 1000], 2000)  # 2003, none of its lists over
    assert not _holds_more_than([[0] * 998, [0] * 998], 2000)  # 1999
    assert _holds_more_than({"a": [0] * 1999}, 2000)  # 2001
    assert _holds_more_than(7, 0) and not _holds_more_than(7, 1)  # a scalar is one value
