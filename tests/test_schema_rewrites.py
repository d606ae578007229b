"""The strict-mode schema rewrite: what it changes, what it reports, and what it never breaks."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from toolwire.codecs.openai_shared import StrictSchemaError, strict_schema


def _objects(node: Any) -> list[dict[str, Any]]:
    """Every object schema inside ``node``."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        kind = node.get("type")
        if kind == "object" or (isinstance(kind, list) and "object" in kind):
            found.append(node)
        for value in node.values():
            found.extend(_objects(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_objects(value))
    return found


def test_closes_objects_and_makes_optional_properties_nullable() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city"],
    }
    out, changes = strict_schema(schema)
    assert out == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": ["string", "null"], "enum": ["c", "f", None]},
        },
        "required": ["city", "unit"],
        "additionalProperties": False,
    }
    assert changes == [
        "#: set additionalProperties to false",
        "#/properties/unit: optional property made required and nullable",
    ]
    assert schema["required"] == ["city"] and "additionalProperties" not in schema  # not mutated


def test_a_strict_ready_schema_is_left_alone() -> None:
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string", "pattern": "^a", "description": "query"}},
        "required": ["q"],
        "additionalProperties": False,
    }
    out, changes = strict_schema(schema)
    assert out == schema and changes == []


def test_unsupported_keywords_and_formats_are_removed_and_reported() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "default": "x"},
            "when": {"type": "string", "format": "date-time"},
            "site": {"type": "string", "format": "uri"},
            "n": {"type": "integer", "minimum": 0, "maximum": 9, "not": {"const": 3}},
        },
        "required": ["name", "when", "site", "n"],
        "additionalProperties": False,
        "patternProperties": {"^x": {"type": "string"}},
    }
    out, changes = strict_schema(schema)
    assert out["properties"] == {
        "name": {"type": "string"},
        "when": {"type": "string", "format": "date-time"},
        "site": {"type": "string"},
        "n": {"type": "integer", "minimum": 0, "maximum": 9},
    }
    assert "$schema" not in out and "patternProperties" not in out
    assert set(changes) == {
        "#: removed unsupported keyword '$schema'",
        "#: removed unsupported keyword 'patternProperties'",
        "#/properties/name: removed unsupported keyword 'minLength'",
        "#/properties/name: removed unsupported keyword 'default'",
        "#/properties/site: removed unsupported format 'uri'",
        "#/properties/n: removed unsupported keyword 'not'",
    }


def test_free_form_object_is_closed_with_a_distinct_report() -> None:
    schema = {
        "type": "object",
        "properties": {"meta": {"type": "object", "additionalProperties": {"type": "string"}}},
        "required": ["meta"],
        "additionalProperties": False,
    }
    out, changes = strict_schema(schema)
    assert out["properties"]["meta"] == {
        "type": "object", "properties": {}, "required": [], "additionalProperties": False,
    }
    assert changes == [
        "#/properties/meta: set additionalProperties to false (extra keys were allowed before)"
    ]


def test_nested_arrays_refs_and_defs_are_rewritten() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
            "main": {"$ref": "#/$defs/Item", "description": "the main one"},
            "other": {"$ref": "#/$defs/Item"},
        },
        "required": ["items", "main"],
        "$defs": {"Item": {"type": "object", "properties": {"sku": {"type": "string"}}}},
    }
    out, changes = strict_schema(schema)
    item = out["$defs"]["Item"]
    assert item == {
        "type": "object", "properties": {"sku": {"type": ["string", "null"]}},
        "required": ["sku"], "additionalProperties": False,
    }
    assert out["properties"]["items"] == {"type": "array", "items": {"$ref": "#/$defs/Item"}}
    # a $ref with a sibling keyword is inlined (strict mode refuses siblings next to $ref)
    assert out["properties"]["main"]["description"] == "the main one"
    assert "$ref" not in out["properties"]["main"]
    assert out["properties"]["main"]["additionalProperties"] is False
    # an optional pure $ref becomes a union with null
    assert out["properties"]["other"] == {"anyOf": [{"$ref": "#/$defs/Item"}, {"type": "null"}]}
    assert "#/properties/main: inlined $ref '#/$defs/Item' because it had sibling keywords " \
           "(description)" in changes
    assert "#/properties/other: optional property made required and nullable" in changes


def test_one_of_all_of_and_nullable_are_translated() -> None:
    schema = {
        "type": "object",
        "properties": {
            "v": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "both": {"allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "integer"}}, "required": ["b"]},
            ]},
            "maybe": {"type": "integer", "nullable": True},
        },
        "required": ["v", "both", "maybe"],
    }
    out, changes = strict_schema(schema)
    assert out["properties"]["v"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert out["properties"]["both"] == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    assert out["properties"]["maybe"] == {"type": ["integer", "null"]}
    assert "#/properties/v: changed oneOf to anyOf (oneOf is not supported)" in changes
    assert "#/properties/maybe: turned 'nullable: true' into a null type" in changes
    assert any("merged allOf (2 schemas)" in c for c in changes)


def test_optional_property_already_nullable_is_only_made_required() -> None:
    schema = {"type": "object", "properties": {"x": {"type": ["string", "null"]}},
              "additionalProperties": False}
    out, changes = strict_schema(schema)
    assert out["properties"]["x"] == {"type": ["string", "null"]} and out["required"] == ["x"]
    assert changes == ["#/properties/x: optional property made required (it already accepts null)"]


def test_root_without_type_gets_object_and_union_root_is_refused() -> None:
    out, changes = strict_schema({"properties": {}})
    assert out == {
        "type": "object", "properties": {}, "required": [], "additionalProperties": False
    }
    assert changes[0] == '#: added "type": "object" at the root'
    with pytest.raises(StrictSchemaError):
        strict_schema({"anyOf": [{"type": "object"}, {"type": "string"}]})
    with pytest.raises(StrictSchemaError):
        strict_schema({"type": "array", "items": {"type": "string"}})


# ---------------------------------------------------------------------- properties

_leaf = st.one_of(
    st.just({"type": "string"}),
    st.just({"type": "string", "minLength": 2, "maxLength": 5}),
    st.just({"type": "integer", "minimum": 0, "default": 1}),
    st.just({"type": "boolean"}),
    st.just({"type": "string", "enum": ["a", "b"]}),
    st.just({"type": "integer", "nullable": True}),
    st.just({"type": "string", "format": "uri"}),
)


def _object_of(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        props = draw(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), children, max_size=3))
        required = [k for k in props if draw(st.booleans())]
        return {"type": "object", "properties": props, "required": required,
                "additionalProperties": False}

    return build()


_schemas = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        _object_of(inner), st.builds(lambda s: {"type": "array", "items": s, "maxItems": 2}, inner)
    ),
    max_leaves=6,
)
_roots = _object_of(_schemas)


def _fill_nulls(schema: dict[str, Any], value: Any) -> Any:
    """The instance a strict caller sends: missing optional properties given as null."""
    if isinstance(value, dict) and "properties" in schema:
        return {name: _fill_nulls(sub, value[name]) if name in value else None
                for name, sub in schema["properties"].items()}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_fill_nulls(schema["items"], v) for v in value]
    return value


@settings(max_examples=150, deadline=None)
@given(_roots)
def test_rewrite_is_idempotent_closed_and_does_not_mutate(schema: dict[str, Any]) -> None:
    before = copy.deepcopy(schema)
    out, _ = strict_schema(schema)
    assert schema == before
    again, changes = strict_schema(out)
    assert again == out and changes == []
    for obj in _objects(out):
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])
    jsonschema_rs.meta.validate(out)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_every_valid_call_stays_valid_once_optional_fields_are_null(data: st.DataObject) -> None:
    schema = data.draw(_roots)
    out, _ = strict_schema(schema)
    original = jsonschema_rs.validator_for(schema)
    strict = jsonschema_rs.validator_for(out)
    instance = data.draw(from_schema(schema))
    assert original.is_valid(instance)
    assert strict.is_valid(_fill_nulls(schema, instance))
