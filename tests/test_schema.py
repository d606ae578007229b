"""Tools as contracts: building tools, deriving schemas from Python, closing raw schemas."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import functools
import threading
import typing
from typing import Annotated, Any, Literal

import pytest
import typing_extensions
from pydantic import BaseModel, ConfigDict, Field, field_validator

from toolwire.errors import ToolCallError, ToolDefinitionError
from toolwire.schema.tool import Tool, Toolset, tool, validate_call
from toolwire.transcript import ToolSpec

# -- helpers --------------------------------------------------------------------------------------


def objects_in(schema: Any) -> list[dict[str, Any]]:
    """Every dict with ``properties`` anywhere in a schema."""
    found: list[dict[str, Any]] = []
    if isinstance(schema, dict):
        if isinstance(schema.get("properties"), dict):
            found.append(schema)
        for key, value in schema.items():
            if key in ("enum", "const", "default", "examples", "required"):
                continue
            if key == "properties":
                for sub in value.values():
                    found.extend(objects_in(sub))
            else:
                found.extend(objects_in(value))
    elif isinstance(schema, list):
        for value in schema:
            found.extend(objects_in(value))
    return found


def params_of(fn: Any) -> dict[str, Any]:
    props: dict[str, Any] = Tool.from_function(fn).input_schema["properties"]
    return props


# -- raw schemas ----------------------------------------------------------------------------------


def test_raw_schema_tool_exposes_what_the_model_sees() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    t = Tool(name="read_file", description="Read a file.", input_schema=schema)
    closed = {**schema, "additionalProperties": False}
    assert t.name == "read_file"
    assert t.description == "Read a file."
    assert t.input_schema == closed
    assert t.spec == ToolSpec(name="read_file", description="Read a file.", input_schema=closed)
    assert t.fn is None and t.is_async is False and t.idempotent is False and t.timeout is None
    assert schema == {"type": "object", "properties": {"path": {"type": "string"}},
                      "required": ["path"]}  # fmt: skip


def test_raw_schema_objects_are_closed_unless_they_say_otherwise() -> None:
    schema = {
        "type": "object",
        "properties": {
            "opts": {"type": "object", "properties": {"depth": {"type": "integer"}}},
            "env": {"type": "object", "additionalProperties": {"type": "string"}},
            "free": {"type": "object"},
            "open": {"type": "object", "properties": {"a": {}}, "additionalProperties": True},
            "list": {"type": "array", "items": {"type": "object", "properties": {"x": {}}}},
        },
    }
    shown = Tool(name="t", input_schema=schema).input_schema
    props = shown["properties"]
    assert shown["additionalProperties"] is False
    assert props["opts"]["additionalProperties"] is False
    assert props["env"]["additionalProperties"] == {"type": "string"}
    assert "additionalProperties" not in props["free"]
    assert props["open"]["additionalProperties"] is True
    assert props["list"]["items"]["additionalProperties"] is False
    assert validate_call([Tool(name="t", input_schema=schema)], "t", {"free": {"any": 1}}) == {
        "free": {"any": 1}
    }


def test_raw_schema_composition_is_left_as_written() -> None:
    schema = {
        "type": "object",
        "allOf": [{"properties": {"a": {"type": "string"}}}, {"properties": {"b": {}}}],
    }
    t = Tool(name="t", input_schema=schema)
    assert t.input_schema == schema  # closing a branch would reject the other branch's field
    assert t.validate({"a": "x", "b": 1}) == {"a": "x", "b": 1}


def test_missing_type_becomes_object_and_no_schema_means_no_arguments() -> None:
    assert Tool(name="t", input_schema={"properties": {}}).input_schema == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    bare = Tool(name="ping")
    assert bare.input_schema == {"type": "object", "properties": {}, "additionalProperties": False}
    assert bare.validate(None) == {}
    assert bare.validate("") == {}


def test_names_are_the_users_own() -> None:
    t = Tool(name="math.sum", input_schema={"type": "object", "properties": {}})
    assert t.name == "math.sum"
    assert validate_call([t], "math.sum", "{}") == {}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": ""}, "a tool needs a non-empty name, got ''"),
        ({"name": "  "}, "a tool needs a non-empty name, got '  '"),
        ({"name": None}, "a tool needs a non-empty name, got None"),
        (
            {"name": "t", "input_schema": ["type", "object"]},
            "tool 't': input_schema must be a JSON Schema object (a dict), got list",
        ),
        (
            {"name": "t", "input_schema": {"type": "string"}},
            'tool \'t\': input_schema must describe an object ("type": "object"), '
            'got {"type": "string"}',
        ),
        (
            {"name": "t", "input_schema": {"type": "object", "default": object()}},
            "tool 't': input_schema must hold only JSON values: "
            "Object of type object is not JSON serializable",
        ),
        (
            {"name": "t", "input_schema": {"type": "object", "properties": {"a": {"type": "x"}}}},
            "tool 't': input_schema is not a valid JSON Schema: "
            "\"x\" is not valid under any of the schemas listed in the 'anyOf' keyword",
        ),
        (
            {"name": "t", "input_schema": {"properties": {"a": {"pattern": "("}}}},
            'tool \'t\': input_schema is not a valid JSON Schema: "(" is not a "regex"',
        ),
        (
            {"name": "t", "fn": 3},
            "tool 't': fn must be callable, got 3",
        ),
        ({"name": "t", "timeout": 0}, "tool 't': timeout must be positive, got 0"),
    ],
)
def test_definition_errors_are_clear(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        Tool(**kwargs)
    assert str(caught.value) == message


def test_remote_refs_are_not_fetched() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}
    with pytest.raises(ToolDefinitionError, match="not a valid JSON Schema: Resource"):
        Tool(name="t", input_schema=schema)


def test_tools_are_immutable() -> None:
    t = Tool(name="t")
    with pytest.raises(AttributeError, match="Tool is immutable"):
        t.name = "u"  # type: ignore[misc]


# -- toolsets -------------------------------------------------------------------------------------


def test_toolset_indexes_by_name_and_refuses_duplicates() -> None:
    a, b = Tool(name="a"), Tool(name="b", description="B")
    tools = Toolset([a, b])
    assert list(tools) == ["a", "b"] and tools["b"] is b and len(tools) == 2
    assert tools.specs == (a.spec, b.spec)
    assert Toolset({"a": a}).specs == (a.spec,)
    with pytest.raises(ToolDefinitionError, match="two tools are named 'a'; names must be unique"):
        Toolset([a, Tool(name="a")])
    with pytest.raises(ToolDefinitionError, match="two tools are named 'a'"):
        validate_call([a, Tool(name="a")], "a", "{}")
    with pytest.raises(ToolDefinitionError, match="'x' maps to a tool named 'a'"):
        Toolset({"x": a})


def test_toolset_makes_tools_of_plain_functions() -> None:
    def ping(host: str) -> str:
        return host

    tools = Toolset([ping])
    assert tools["ping"].input_schema["required"] == ["host"]
    assert tools.validate("ping", '{"host": "h"}') == {"host": "h"}


def test_validate_call_takes_a_list_a_mapping_or_a_toolset() -> None:
    t = Tool(name="t", input_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
    for tools in ([t], {"t": t}, Toolset([t])):
        assert validate_call(tools, "t", '{"n": 1}') == {"n": 1}
        assert validate_call(tools, "t", {"n": 2}) == {"n": 2}
        with pytest.raises(ToolCallError) as caught:
            validate_call(tools, "u", "{}")
        assert caught.value.kind == "unknown_tool"


# -- schemas from functions -----------------------------------------------------------------------


def test_scalars_lists_and_maps() -> None:
    def f(
        name: str,
        count: int,
        ratio: float,
        flag: bool,
        items: list[int],
        meta: dict[str, str],
        anything: dict,  # type: ignore[type-arg]
        untyped,  # type: ignore[no-untyped-def]
    ) -> None:
        """Do f."""

    t = Tool.from_function(f)
    assert t.input_schema == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "flag": {"type": "boolean"},
            "items": {"type": "array", "items": {"type": "integer"}},
            "meta": {"type": "object", "additionalProperties": {"type": "string"}},
            "anything": {"type": "object", "additionalProperties": True},
            "untyped": {},
        },
        "required": ["name", "count", "ratio", "flag", "items", "meta", "anything", "untyped"],
        "additionalProperties": False,
    }
    assert t.name == "f" and t.description == "Do f."


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def test_literal_enum_and_defaults() -> None:
    def f(
        mode: Literal["r", "w"],
        color: Color = Color.RED,
        level: Level = Level.LOW,
        n: int = 3,
        label: str | None = None,
        tag: typing.Optional[str] = None,  # noqa: UP045
    ) -> None:
        pass

    t = Tool.from_function(f)
    props = t.input_schema["properties"]
    assert props["mode"] == {"type": "string", "enum": ["r", "w"]}
    assert props["color"] == {"type": "string", "enum": ["red", "blue"], "default": "red"}
    assert props["level"] == {"type": "integer", "enum": [1, 2], "default": 1}
    assert props["n"] == {"type": "integer", "default": 3}
    optional = {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
    assert props["label"] == optional and props["tag"] == optional
    assert t.input_schema["required"] == ["mode"]


class Point(BaseModel):
    """A point on the plane."""

    x: float
    y: float = 0.0


class Shape(BaseModel):
    model_config = ConfigDict(extra="ignore")

    corners: list[Point]
    fill: Color | None = None


@dataclasses.dataclass
class Box:
    width: int
    height: int = 1


class Window(typing.TypedDict):
    left: int
    top: int


class Margins(typing_extensions.TypedDict, total=False):
    inner: int
    outer: int


def test_nested_models_dataclasses_and_typed_dicts() -> None:
    def f(
        shape: Shape, box: Box, window: Window, margins: Margins, at: Point | None = None
    ) -> None:
        pass

    schema = Tool.from_function(f).input_schema
    props = schema["properties"]
    point = {
        "type": "object",
        "description": "A point on the plane.",
        "properties": {"x": {"type": "number"}, "y": {"type": "number", "default": 0.0}},
        "required": ["x"],
        "additionalProperties": False,
    }
    assert props["shape"] == {
        "type": "object",
        "properties": {
            "corners": {"type": "array", "items": point},
            "fill": {
                "anyOf": [{"type": "string", "enum": ["red", "blue"]}, {"type": "null"}],
                "default": None,
            },
        },
        "required": ["corners"],
        "additionalProperties": False,
    }
    assert props["box"] == {
        "type": "object",
        "properties": {"width": {"type": "integer"}, "height": {"type": "integer", "default": 1}},
        "required": ["width"],
        "additionalProperties": False,
    }
    assert props["window"]["properties"] == {
        "left": {"type": "integer"},
        "top": {"type": "integer"},
    }
    assert props["window"]["required"] == ["left", "top"]
    assert props["margins"]["properties"] == {
        "inner": {"type": "integer"},
        "outer": {"type": "integer"},
    }
    assert "required" not in props["margins"]
    assert props["at"] == {"anyOf": [point, {"type": "null"}], "default": None}
    assert "$defs" not in schema and "title" not in str(schema)
    assert all(obj["additionalProperties"] is False for obj in objects_in(schema))


class Tree(BaseModel):
    value: int
    children: list[Tree] = []


def test_recursive_models_keep_a_reference() -> None:
    def grow(tree: Tree) -> None:
        pass

    t = Tool.from_function(grow)
    assert t.input_schema["properties"]["tree"] == {"$ref": "#/$defs/Tree"}
    assert t.input_schema["$defs"]["Tree"]["additionalProperties"] is False
    assert t.validate({"tree": {"value": 1, "children": [{"value": 2}]}})
    with pytest.raises(ToolCallError, match=r'"tree.children\[0\].value": missing'):
        t.validate({"tree": {"value": 1, "children": [{}]}})


def test_descriptions_from_the_docstring() -> None:
    def search(query: str, limit: int = 10, *, exact: bool = False) -> list[str]:
        """Search the code base.

        Finds lines that match.

        Args:
            query: What to look for. May span
                two lines.
            limit (int): At most this many results.

        Returns:
            The matching lines.
        """
        return []

    t = Tool.from_function(search)
    assert t.description == "Search the code base.\n\nFinds lines that match."
    props = t.input_schema["properties"]
    assert props["query"] == {
        "type": "string",
        "description": "What to look for. May span two lines.",
    }
    assert props["limit"] == {
        "type": "integer",
        "default": 10,
        "description": "At most this many results.",
    }
    assert props["exact"] == {"type": "boolean", "default": False}


def test_numpy_and_sphinx_docstrings() -> None:
    def numpy_style(a: int) -> None:
        """Add.

        Parameters
        ----------
        a : int
            The first.
        """

    def sphinx_style(a: int) -> None:
        """Add.

        :param a: The first.
        :type a: int
        """

    for fn in (numpy_style, sphinx_style):
        t = Tool.from_function(fn)
        assert t.description == "Add."
        assert t.input_schema["properties"]["a"]["description"] == "The first."


def test_field_metadata_wins_over_the_docstring() -> None:
    def f(
        a: Annotated[int, Field(description="From Field", ge=0)], b: int = Field(2, le=5)
    ) -> None:
        """F.

        Args:
            a: From the docstring.
            b: B from the docstring.
        """

    props = params_of(f)
    assert props["a"] == {"type": "integer", "description": "From Field", "minimum": 0}
    assert props["b"] == {"type": "integer", "default": 2, "maximum": 5,
                          "description": "B from the docstring."}  # fmt: skip


def test_parameter_names_that_clash_with_pydantic_are_fine() -> None:
    def f(json: str, schema: str, model_config: int, copy: bool = False) -> str:
        return f"{json} {schema} {model_config} {copy}"

    t = Tool.from_function(f)
    assert list(t.input_schema["properties"]) == ["json", "schema", "model_config", "copy"]
    args = t.validate({"json": "j", "schema": "s", "model_config": 1})
    assert t.call(args) == "j s 1 False"


def test_signatures_that_cannot_be_tools() -> None:
    def star(*paths: str) -> None:
        pass

    def stars(**options: str) -> None:
        pass

    def unresolved(x: NoSuchType) -> None:  # type: ignore[name-defined]  # noqa: F821
        pass

    with pytest.raises(ToolDefinitionError, match=r"parameter \*paths cannot be a JSON field"):
        Tool.from_function(star)
    with pytest.raises(ToolDefinitionError, match=r"parameter \*\*options cannot be a JSON field"):
        Tool.from_function(stars)
    with pytest.raises(ToolDefinitionError, match="cannot read the signature"):
        Tool.from_function(unresolved)
    with pytest.raises(ToolDefinitionError, match="cannot describe its parameters"):
        Tool.from_function(_takes_a_lock)


def test_partials_need_a_name_and_nested_typed_dicts_convert() -> None:
    def place(windows: list[Window], scale: int) -> int:
        return sum(w["left"] for w in windows) * scale

    with pytest.raises(ToolDefinitionError, match=r"cannot name a tool after .*: pass name="):
        Tool.from_function(functools.partial(place, scale=2))
    t = Tool.from_function(functools.partial(place, scale=2), name="place")
    assert list(t.input_schema["properties"]) == ["windows", "scale"]
    assert t.input_schema["required"] == ["windows"]
    assert t.call(t.validate('{"windows": [{"left": 1, "top": 0}, {"left": 2, "top": 0}]}')) == 6


def _takes_a_lock(lock: threading.Lock) -> None:  # type: ignore[valid-type]
    pass


# -- the decorator and calling --------------------------------------------------------------------


@tool
def add(a: int, b: int = 1) -> int:
    """Add two integers."""
    return a + b


@tool(name="math.mul", idempotent=True, timeout=2.5, description="Multiply.")
def mul(a: int, b: int) -> int:
    return a * b


def test_decorator_bare_and_with_options() -> None:
    assert isinstance(add, Tool) and add.name == "add" and add.description == "Add two integers."
    assert add(2, 3) == 5  # still callable like the function
    assert mul.name == "math.mul" and mul.idempotent and mul.timeout == 2.5
    assert mul.description == "Multiply." and mul.spec.name == "math.mul"


def test_decorator_options_are_the_factorys_and_a_misspelt_one_is_named_at_once() -> None:
    @tool(read_only=True, strict=True)
    def look(path: str) -> str:
        """Read a file."""
        return path

    made = Tool.from_function(look.fn, read_only=True, strict=True)
    assert look.read_only and look.strict and look.spec == made.spec
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'nam'.*takes name, "):
        tool(nam="x")  # type: ignore[call-overload]


def test_a_model_tool_and_a_function_tool_are_built_alike() -> None:
    class Point(BaseModel):
        """A point."""

        x: int

    def place(point: Point) -> int:
        return point.x

    by_model = Tool.from_model(Point, place, idempotent=True, timeout=1.5, read_only=True)
    assert (by_model.name, by_model.description, by_model.idempotent, by_model.timeout,
            by_model.read_only, by_model.spec.examples) == ("Point", "A point.", True, 1.5,
                                                            True, ())
    assert by_model.validate({"x": 3}) == {"x": 3}
    renamed = Tool.from_model(Point, name="pt", description="")
    assert renamed.name == "pt" and renamed.description == "" and renamed.fn is None


def test_call_uses_the_functions_own_defaults_and_types() -> None:
    seen: dict[str, Any] = {}

    def place(
        where: Point, box: Box, color: Color, window: Window, tags: tuple[str, ...] = ()
    ) -> str:
        seen.update(where=where, box=box, color=color, window=window, tags=tags)
        return "ok"

    t = Tool.from_function(place)
    args = t.validate(
        '{"where": {"x": 1}, "box": {"width": 2}, "color": "blue", "window": {"left": 1, "top": 2}}'
    )
    assert t.call(args) == "ok"
    assert seen == {
        "where": Point(x=1.0),
        "box": Box(width=2),
        "color": Color.BLUE,
        "window": {"left": 1, "top": 2},
        "tags": (),
    }


def test_positional_only_parameters() -> None:
    def f(a: int, b: int = 5, /, c: int = 0) -> tuple[int, int, int]:
        return a, b, c

    t = Tool.from_function(f)
    assert t.bind({"a": 1, "c": 3}) == ((1, 5), {"c": 3})
    assert t.call({"a": 1, "b": 2}) == (1, 2, 0)


def test_raw_schema_tools_get_keyword_arguments() -> None:
    t = Tool(
        name="echo",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
        fn=lambda text="": text.upper(),
    )
    assert t.call(t.validate('{"text": "hi"}')) == "HI"
    assert t.bind({"text": "x"}) == ((), {"text": "x"})


def test_definition_only_tools_cannot_run() -> None:
    t = Tool(name="remote")
    with pytest.raises(TypeError, match="tool 'remote' is a definition only"):
        t.call({})


class Even(BaseModel):
    n: int

    @field_validator("n")
    @classmethod
    def even(cls, n: int) -> int:
        if n % 2:
            raise ValueError("must be even")
        return n


def test_a_value_the_python_type_refuses_is_a_call_error() -> None:
    def half(number: Even) -> int:
        return number.n // 2

    t = Tool.from_function(half)
    with pytest.raises(ToolCallError) as caught:
        t.call(t.validate({"number": {"n": 3}}))
    assert caught.value.kind == "schema"
    assert str(caught.value) == (
        'Invalid arguments for tool "half":\n- "number.n": Value error, must be even'
    )


async def test_async_and_sync_functions() -> None:
    async def slow(x: int) -> int:
        await asyncio.sleep(0)
        return x * 2

    threads: list[str] = []

    def fast(x: int) -> int:
        threads.append(threading.current_thread().name)
        return x + 1

    a, s = Tool.from_function(slow), Tool.from_function(fast)
    assert a.is_async and not s.is_async
    assert await a.acall({"x": 2}) == 4
    assert await s.acall({"x": 2}) == 3
    assert threads and threads[0] != threading.current_thread().name  # ran in a worker thread


# -- a tool from a Pydantic model -----------------------------------------------------------------


class Weather(BaseModel):
    """Get the weather for a city."""

    city: str = Field(description="City name")
    unit: Literal["C", "F"] = "C"


def test_tool_from_a_model_passes_the_instance() -> None:
    got: list[Weather] = []
    t = Tool.from_model(Weather, got.append)
    assert t.name == "Weather" and t.description == "Get the weather for a city."
    assert t.input_schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["C", "F"], "default": "C"},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    t.call(t.validate('{"city": "Oslo"}'))
    assert got == [Weather(city="Oslo")]
    assert Tool.from_model(Weather, name="weather", description="W").spec.description == "W"
    with pytest.raises(ToolDefinitionError, match="needs a Pydantic model class"):
        Tool.from_model(dict)  # type: ignore[arg-type]
