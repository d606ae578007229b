"""No input crashes or stalls the argument check: depth limits, hostile names, huge failing calls.

Arguments nested far deeper than any tool needs are refused with an error naming the limit
before the validator (native code, which would overflow its stack) sees them; the deepest case
runs in a subprocess so a crash would show as its exit code. A schema nested beyond the limit
is refused when the tool is defined. A tool name that is not a string is an unknown tool. A
call with a million wrong items reads a bounded number of the validator's errors.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

from toolwire import ToolCallError, ToolDefinitionError
from toolwire.agent.dispatch import Dispatcher
from toolwire.schema.report import MAX_EXAMINED, MAX_PROBLEMS
from toolwire.schema.tool import Tool, Toolset, validate_call
from toolwire.schema.validate import LIST_ALL_UP_TO, MAX_ARGUMENT_DEPTH, Checker
from toolwire.schema.walk import MAX_SCHEMA_DEPTH, may_recurse, nested_deeper
from toolwire.transcript import ToolCallPart

TREE = {"type": "object", "properties": {"child": {"$ref": "#"}, "leaf": {"type": "integer"}}}
"""A recursive schema: any depth of ``child`` fits it."""


def nested(depth: int) -> dict[str, Any]:
    """``{"child": {"child": ... {"leaf": 1}}}``: ``depth`` objects, one inside the next."""
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(depth - 1):
        value = {"child": value}
    return value


def text(depth: int) -> str:
    return '{"child": ' * (depth - 1) + '{"leaf": 1}' + "}" * (depth - 1)


def test_arguments_ten_thousand_deep_are_refused_in_a_process_that_survives() -> None:
    code = textwrap.dedent('''
        import json, sys
        from toolwire import ToolCallError
        from toolwire.schema.tool import Tool, Toolset, validate_call
        tools = Toolset([Tool(name="tree", input_schema=json.loads(sys.argv[1]))])
        value = {"leaf": 1}
        for _ in range(10_000):
            value = {"child": value}
        for arguments in (value, '{"child": ' * 10_000 + '{}' + '}' * 10_000):
            try:
                validate_call(tools, "tree", arguments)
            except ToolCallError as exc:
                print(exc.kind, "|", exc)
    ''')
    done = subprocess.run([sys.executable, "-c", code, json.dumps(TREE)], capture_output=True,
                          text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    kinds = [line.split(" | ")[0] for line in done.stdout.splitlines()]
    assert kinds[0] == "too_deep" and f"deeper than {MAX_ARGUMENT_DEPTH} levels" in done.stdout
    assert kinds[1] in ("too_deep", "invalid_json")  # deeper than the JSON reader goes, too


@pytest.mark.parametrize("as_text", [False, True], ids=["object", "text"])
def test_the_depth_limit_is_exact(as_text: bool) -> None:
    tools = Toolset([Tool(name="tree", input_schema=TREE)])
    ok = nested(MAX_ARGUMENT_DEPTH)
    assert validate_call(tools, "tree", text(MAX_ARGUMENT_DEPTH) if as_text else ok) == ok
    with pytest.raises(ToolCallError) as caught:
        too_deep = MAX_ARGUMENT_DEPTH + 1
        validate_call(tools, "tree", text(too_deep) if as_text else nested(too_deep))
    assert caught.value.kind == "too_deep"
    assert f"deeper than {MAX_ARGUMENT_DEPTH} levels" in str(caught.value)
    assert "Send a flatter JSON object like" in str(caught.value)


def test_a_deep_call_reaches_the_model_as_an_error_result() -> None:
    dispatcher = Dispatcher([Tool(name="tree", input_schema=TREE, fn=lambda **kw: "ran")])
    import asyncio

    call = ToolCallPart(id="c1", name="tree", arguments=nested(MAX_ARGUMENT_DEPTH + 50))
    [result] = asyncio.run(dispatcher.run([call]))
    assert result.is_error and str(MAX_ARGUMENT_DEPTH) in result.content


@pytest.mark.parametrize("depth", [MAX_SCHEMA_DEPTH + 1, 2_000, 20_000])
def test_a_schema_nested_beyond_the_limit_is_refused_at_definition(depth: int) -> None:
    schema: Any = {"type": "integer"}
    for _ in range(depth // 2):
        schema = {"type": "object", "properties": {"c": schema}}
    with pytest.raises(ToolDefinitionError, match=f"deeper than {MAX_SCHEMA_DEPTH} levels"):
        Tool(name="deep", input_schema=schema)


def test_nested_deeper_counts_levels() -> None:
    assert not nested_deeper(5, 0) and not nested_deeper("text", 0)
    assert nested_deeper({}, 0) and not nested_deeper({}, 1)
    assert not nested_deeper({"a": [1, {"b": ()}]}, 4) and nested_deeper({"a": [{"b": ()}]}, 3)
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    assert nested_deeper(deep, 99_999) and not nested_deeper(deep, 100_001)


@pytest.mark.parametrize("name", [["get"], {"a": 1}, {1, 2}, ("get", ["x"]), None, 3])
def test_a_name_that_is_not_a_string_is_an_unknown_tool(name: Any) -> None:
    tools = [Tool(name="get")]
    for given in (tools, Toolset(tools), {"get": tools[0]}):
        with pytest.raises(ToolCallError) as caught:
            validate_call(given, name, {})
        assert caught.value.kind == "unknown_tool"
    with pytest.raises(ToolCallError):
        Toolset(tools).validate(name, {})
    with pytest.raises(ToolCallError):
        Toolset(tools).check_call(ToolCallPart(id="c", name=name, arguments={}))


class Counting:
    """The real validator, counting the errors the check reads from it."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.read = 0

    def is_valid(self, value: Any) -> bool:
        return bool(self.real.is_valid(value))

    def validate(self, value: Any) -> None:
        try:
            self.real.validate(value)
        except ValueError:
            self.read += 1
            raise

    def iter_errors(self, value: Any) -> Iterator[Any]:
        for error in self.real.iter_errors(value):
            self.read += 1
            yield error


SUM = {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer"}}}}


def counted(size: int) -> tuple[Counting, ToolCallError]:
    """A call of ``size`` wrong items: what the check read, and the error it raised."""
    tool = Tool(name="sum", input_schema=SUM)
    counting = Counting(tool._checker.validator)
    tool._checker.validator = counting
    arguments = '{"xs": [' + ",".join(['"x"'] * size) + "]}"
    with pytest.raises(ToolCallError) as caught:
        validate_call([tool], "sum", arguments)
    return counting, caught.value


@pytest.mark.parametrize("size", [10**5, 10**6])
def test_a_call_with_a_million_wrong_items_reads_one_error(size: int) -> None:
    counting, error = counted(size)
    assert counting.read == 1  # the same for 10^5 and 10^6 items: time linear in the text
    assert error.problems == ('"xs[0]": got "x", want an integer',)
    assert str(error).splitlines()[1:] == [
        '- "xs[0]": got "x", want an integer',
        f"- … and maybe more problems: the arguments hold more than {LIST_ALL_UP_TO} values, "
        "so the check stopped at the first",
    ]


def test_text_just_long_enough_to_hold_too_many_values_reads_one_error() -> None:
    arguments = '{"xs": ["x",' + ",".join(["0"] * (LIST_ALL_UP_TO + 100)) + "]}"
    assert 2 * LIST_ALL_UP_TO < len(arguments) < 3 * LIST_ALL_UP_TO
    with pytest.raises(ToolCallError) as caught:
        validate_call([Tool(name="sum", input_schema=SUM)], "sum", arguments)
    assert str(caught.value).splitlines()[-1] == (
        f"- … and maybe more problems: the arguments hold more than {LIST_ALL_UP_TO} values, "
        "so the check stopped at the first")


def test_a_smaller_call_lists_a_bounded_number_of_problems() -> None:
    counting, error = counted(LIST_ALL_UP_TO - 10)
    assert counting.read == MAX_EXAMINED + 1
    assert len(error.problems) == MAX_EXAMINED
    lines = str(error).splitlines()
    assert len(lines) == 1 + MAX_PROBLEMS + 1 and lines[1] == '- "xs[0]": got "x", want an integer'
    assert lines[-1] == (f"- … and at least {MAX_EXAMINED - MAX_PROBLEMS} more problems "
                         f"(the check stops after {MAX_EXAMINED})")


def test_exactly_the_examined_number_of_problems_counts_them_all() -> None:
    counting, error = counted(MAX_EXAMINED)
    assert counting.read == MAX_EXAMINED
    assert str(error).splitlines()[-1] == f"- … and {MAX_EXAMINED - MAX_PROBLEMS} more problems"


def test_only_schemas_that_recurse_have_their_calls_measured_first() -> None:
    defs = {"$defs": {"A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/A"}}}}}
    assert may_recurse(TREE) and may_recurse({"$ref": "#/$defs/A", **defs})
    assert may_recurse({"properties": {"x": {"$ref": "https://example.com/s.json"}}})
    assert may_recurse({"properties": {"x": {"$dynamicRef": "#node"}}})
    flat = {"$defs": {"P": {"type": "string"}}, "properties": {"p": {"$ref": "#/$defs/P"}}}
    assert not may_recurse(flat) and not may_recurse({"properties": {"x": {"type": "array"}}})
    # an open schema never descends, so a deep value passes it; a recursive one refuses it
    open_tool = Tool(name="any", input_schema={"type": "object"})
    deep = nested(5_000)
    assert validate_call([open_tool], "any", deep) is deep


LISTS = {"type": "object", "properties": {"items": {"$ref": "#/$defs/list"}},
         "$defs": {"list": {"type": "array", "items": {"$ref": "#/$defs/list"}}}}
"""A recursive schema of arrays: any depth of ``[[...]]`` fits it."""


@pytest.mark.parametrize("as_text", [False, True], ids=["object", "text"])
def test_arrays_count_toward_the_depth_limit(as_text: bool) -> None:
    tools = Toolset([Tool(name="lists", input_schema=LISTS)])

    def arguments(depth: int) -> Any:  # the object is one level, the arrays the rest
        if as_text:
            return '{"items": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"
        value: list[Any] = []
        for _ in range(depth - 2):
            value = [value]
        return {"items": value}

    assert validate_call(tools, "lists", arguments(MAX_ARGUMENT_DEPTH)) is not None
    with pytest.raises(ToolCallError) as caught:
        validate_call(tools, "lists", arguments(MAX_ARGUMENT_DEPTH + 1))
    detail = (f"they nest objects and arrays deeper than {MAX_ARGUMENT_DEPTH} levels, the most "
              "toolwire checks")
    assert (caught.value.kind, caught.value.tool, caught.value.problems) == (
        "too_deep", "lists", (detail,))
    assert str(caught.value).startswith(f'Arguments for tool "lists" are refused: {detail}.')


# -- values a codec parsed already: checked as they are ----------------------------------------


def test_a_parsed_value_is_checked_with_the_same_depth_limit() -> None:
    check = Tool(name="tree", input_schema=TREE)._checker.check_parsed
    ok, deep = nested(MAX_ARGUMENT_DEPTH), nested(MAX_ARGUMENT_DEPTH + 1)
    for given in (text(MAX_ARGUMENT_DEPTH), None):
        assert check(ok, given) == ok
    assert check({"leaf": 1}, '{"leaf": 1}') == {"leaf": 1}
    for given in (text(MAX_ARGUMENT_DEPTH + 1), None):
        with pytest.raises(ToolCallError) as caught:
            check(deep, given)
        assert caught.value.kind == "too_deep"
    with pytest.raises(ToolCallError) as caught:
        check({"leaf": "x"}, None)
    assert '"leaf": got "x", want an integer' in str(caught.value)


def test_a_parsed_value_that_is_no_object_is_refused_even_by_a_schema_without_a_type() -> None:
    check = Tool(name="t", input_schema={"properties": {"a": {"type": "integer"}}}
                 )._checker.check_parsed
    with pytest.raises(ToolCallError) as caught:
        check([1, 2], "[1, 2]")
    assert caught.value.kind == "not_an_object"


def test_a_parsed_value_read_from_a_number_json_cannot_carry_is_refused_as_json() -> None:
    check = Tool(name="t", input_schema={"properties": {"a": {"type": "number"}}}
                 )._checker.check_parsed
    with pytest.raises(ToolCallError) as caught:
        check({"a": float("inf")}, '{"a": 1e400}')
    assert caught.value.kind == "invalid_json"
    assert "the number 1e400 is too large for JSON" in str(caught.value)


def test_a_checker_made_on_its_own_refuses_a_schema_nested_beyond_the_limit() -> None:
    schema: Any = {"type": "integer"}
    for _ in range(MAX_SCHEMA_DEPTH):
        schema = {"type": "object", "properties": {"c": schema}}
    with pytest.raises(ToolDefinitionError) as caught:
        Checker("deep", schema)
    assert str(caught.value) == (
        f"tool 'deep': input_schema nests deeper than {MAX_SCHEMA_DEPTH} levels, the most "
        "toolwire reads; put recursive or repeated parts in $defs and reach them with $ref")
