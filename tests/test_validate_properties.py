"""Properties of validate_call over generated schemas and the arguments they allow.

Every argument object hypothesis-jsonschema draws from a tool's schema passes; one mutation
(a wrong type, a missing required field, an extra field) is refused with a message that names
the field; the example a message shows is itself valid.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any, Literal

import jsonschema_rs
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from pydantic import BaseModel
from typing_extensions import TypedDict

from toolwire.errors import ToolCallError
from toolwire.schema.tool import Tool, validate_call

SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

names = st.from_regex(r"\A[a-z][a-z_]{0,7}\Z")

leaves = st.sampled_from(
    [
        {"type": "string"},
        {"type": "string", "minLength": 1, "maxLength": 8},
        {"type": "integer"},
        {"type": "integer", "minimum": 0, "maximum": 100},
        {"type": "number"},
        {"type": "boolean"},
        {"enum": ["red", "green", "blue"]},
        {"type": "string", "enum": ["r", "w"]},
        {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        {"type": ["string", "null"]},
        {"type": "object", "additionalProperties": {"type": "integer"}},
    ]
)


def objects(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        props = draw(st.dictionaries(names, inner, min_size=1, max_size=4))
        required = draw(st.lists(st.sampled_from(sorted(props)), unique=True))
        schema: dict[str, Any] = {"type": "object", "properties": props}
        if required:
            schema["required"] = required
        return schema

    return build()


values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.builds(lambda items: {"type": "array", "items": items, "maxItems": 3}, inner),
        objects(inner),
    ),
    max_leaves=6,
)
tool_schemas = objects(values)

WRONG = ([], {}, "zz-wrong", 12345.5, True, None)


def field_lines(error: ToolCallError, name: str) -> list[str]:
    """Problems about ``name`` or something inside it."""
    head = json.dumps(name)[:-1]
    return [p for p in error.problems if p.startswith(head) and p[len(head)] in '".[']


@SETTINGS
@given(
    schema=tool_schemas,
    data=st.data(),
    mutation=st.sampled_from(["wrong_type", "missing", "extra"]),
)
def test_generated_arguments_pass_and_one_mutation_is_refused_naming_the_field(
    schema: dict[str, Any], data: st.DataObject, mutation: str
) -> None:
    tool = Tool(name="t", input_schema=schema)
    arguments = data.draw(from_schema(tool.input_schema))
    assert validate_call([tool], "t", json.dumps(arguments)) == arguments
    assert validate_call({"t": tool}, "t", arguments) == arguments
    props: dict[str, Any] = tool.input_schema["properties"]
    if mutation == "wrong_type":
        assume(arguments)
        name = data.draw(st.sampled_from(sorted(arguments)))
        check = jsonschema_rs.validator_for(props[name])
        wrong = [v for v in WRONG if not check.is_valid(v)]
        assume(wrong)
        arguments[name] = data.draw(st.sampled_from(wrong))
    elif mutation == "missing":
        required = [n for n in tool.input_schema.get("required", []) if n in arguments]
        assume(required)
        name = data.draw(st.sampled_from(required))
        del arguments[name]
    else:
        name = data.draw(names.filter(lambda n: n not in props))
        arguments[name] = data.draw(st.sampled_from(WRONG))
    try:
        validate_call([tool], "t", json.dumps(arguments))
    except ToolCallError as error:
        lines = field_lines(error, name)
        assert lines, (str(error), name)
        if mutation == "missing":
            assert lines[0].startswith(f"{json.dumps(name)}: missing")
        if mutation == "extra":
            assert error.kind == "unknown_field"
            assert len(lines) == 1 and lines[0].startswith(f"{json.dumps(name)}: unknown field")
        else:
            assert error.kind == "schema"
    else:
        raise AssertionError(f"{mutation} of {name!r} passed: {arguments!r}")


@settings(SETTINGS, max_examples=50)
@given(schema=tool_schemas)
def test_the_example_in_a_message_is_valid(schema: dict[str, Any]) -> None:
    tool = Tool(name="t", input_schema=schema)
    try:
        validate_call([tool], "t", "[]")
    except ToolCallError as error:
        message = str(error)
        example = message[message.index("like ") + 5 : -1]
        assert validate_call([tool], "t", example) == json.loads(example)
    else:
        raise AssertionError("an array passed as arguments")


# -- schemas derived from Python: valid JSON also converts to the Python types --------------------


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(BaseModel):
    x: float
    y: float = 0.0


class Window(TypedDict, total=False):
    left: int
    top: int


@dataclasses.dataclass
class Box:
    width: int
    height: int = 1


def within_int64(value: Any) -> bool:
    """Pydantic refuses integers beyond 64 bits written as floats (``1e19``); JSON Schema not."""
    if isinstance(value, dict):
        return all(within_int64(v) for v in value.values())
    if isinstance(value, list):
        return all(within_int64(v) for v in value)
    return not isinstance(value, int | float) or abs(value) < 2**63


def everything(
    name: str,
    count: int,
    ratio: float,
    flag: bool,
    tags: list[str],
    meta: dict[str, int],
    mode: Literal["r", "w"],
    color: Color,
    at: Point,
    window: Window,
    box: Box,
    label: str | None = None,
    points: list[Point] | None = None,
) -> None:
    """Take one of everything."""


EVERYTHING = Tool.from_function(everything)


@settings(SETTINGS, max_examples=30)
@given(arguments=from_schema(EVERYTHING.input_schema).filter(within_int64))
def test_derived_schemas_accept_and_convert_what_they_allow(arguments: dict[str, Any]) -> None:
    checked = validate_call([EVERYTHING], "everything", json.dumps(arguments))
    _, kwargs = EVERYTHING.bind(checked)
    assert isinstance(kwargs["color"], Color) and isinstance(kwargs["at"], Point)
    assert isinstance(kwargs["box"], Box) and isinstance(kwargs["window"], dict)
