"""Every field a client sends is carried into the canonical transcript, kept for the same
wire's re-encode, or named in the loss report: checked over bodies built from the SDKs'
request types with fields of their own added anywhere a client may put one."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolwire.conversion import convert
from wire_data import data, looped, table

BASES = table("SDK_BODY")
"""Each wire's request as its SDK shapes it, from its test data. Anthropic's, OpenAI's SDKs
send fields of the caller's own anywhere (``extra_body`` and open dicts); botocore,
google-genai and ollama's client refuse an unknown field before sending, but a body reaches
toolwire from other clients too (the proxy, ``toolwire convert``), so the same rule is drawn
for every wire."""


def test_every_wire_has_a_base_body() -> None:
    assert set(BASES) == set(looped())


@pytest.mark.parametrize("wire", looped())
def test_each_wires_sdk_shaped_body_goes_back_to_it_whole(wire: str) -> None:
    body = BASES[wire]
    same = convert(body, wire, wire, model="m")
    again = convert(same.body, wire, wire, model="m")
    assert same.losses == () and again.request == same.request, wire
    for target in looped():  # every other wire takes what it gets, and nothing goes unsaid
        other = convert(body, wire, target, model="m")
        assert "get_weather" in json.dumps(other.body), (wire, target)


def places(body: dict[str, Any], wire: str) -> list[tuple[str, dict[str, Any]]]:
    """Every object of a body a client may add a field to: the body, a message or item, a
    content block, a tool."""
    found: list[tuple[str, dict[str, Any]]] = [("body", body)]
    for key in (data(wire).HISTORY_KEY, "tools", "system"):
        for n, item in enumerate(body.get(key) if isinstance(body.get(key), list) else ()):
            found.append((f"{key}[{n}]", item))
            content = item.get("content", item.get("parts"))
            for m, block in enumerate(content if isinstance(content, list) else ()):
                found.append((f"{key}[{n}].content[{m}]", block))
    return found


def camel(name: str) -> str:
    """``name`` in lowerCamelCase: the same field to Google's JSON, which Gemini's codec
    writes."""
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def contains(whole: Any, name: str, value: Any) -> bool:
    text = json.dumps(whole, sort_keys=True)
    return any(f"{json.dumps(n)}: {json.dumps(value)}" in text for n in (name, camel(name)))


@pytest.mark.parametrize("wire", looped())
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(where=st.integers(0, 50),
       name=st.from_regex(r"x_[a-z]{3,8}", fullmatch=True),
       value=st.one_of(st.booleans(), st.integers(-5, 5), st.text("abc", max_size=4)))
def test_every_field_is_carried_kept_or_named(wire: str, where: int, name: str,
                                              value: Any) -> None:
    body = copy.deepcopy(BASES[wire])
    spots = places(body, wire)
    label, spot = spots[where % len(spots)]
    spot[name] = value
    same = convert(body, wire, wire, model="m")
    assert contains(same.body, name, value) or any(
        n in str(note) for note in same.losses for n in (name, camel(name))), (
        f"{label}.{name} was neither sent back to {wire} nor named")
    for target in looped():
        if target == wire:
            continue
        other = convert(body, wire, target, model="m")
        assert any(n in f"{note.subject} {note.detail}" for note in other.losses
                   for n in (name, camel(name))), (
            f"{label}.{name} went to {target} unnamed")
