"""Every request captured from a real client (tests/fixtures/agents and tests/fixtures/clients),
read with its wire's codec and written to the same wire again, is the body that came: the same
JSON, and inside it every object's keys in the order they came (the body's own top-level keys
are the one order the codecs write their own way); `toolwire.conversion.convert` to the same
wire gives the same bytes back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolwire.codecs import get_codec
from toolwire.conversion import convert

FIXTURES = Path(__file__).parent / "fixtures"
CAPTURED = sorted([*(FIXTURES / "agents").glob("*.json"), *(FIXTURES / "clients").glob("*.json")])


def again(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    captured = json.loads(path.read_text())
    codec = get_codec(captured["wire"])
    encoded = codec.encode(codec.decode_request(captured["body"]))
    assert encoded.notes == ()
    return captured["body"], json.loads(json.dumps(encoded.body))


def test_the_captured_requests_are_found() -> None:
    assert len(CAPTURED) >= 7
    assert {json.loads(p.read_text())["wire"] for p in CAPTURED} == {
        "anthropic-messages", "openai-responses"}


@pytest.mark.parametrize("path", CAPTURED, ids=[p.name for p in CAPTURED])
def test_a_captured_request_goes_back_to_its_wire_as_it_came(path: Path) -> None:
    body, sent = again(path)
    assert sent == body
    in_its_order = {key: sent[key] for key in body}  # the top level in the body's order
    assert json.dumps(in_its_order) == json.dumps(body)  # every inner object's keys in order


@pytest.mark.parametrize("path", CAPTURED, ids=[p.name for p in CAPTURED])
def test_a_captured_request_converted_to_its_own_wire_is_the_same_bytes(path: Path) -> None:
    captured = json.loads(path.read_text())
    done = convert(captured["body"], captured["wire"], captured["wire"])
    assert done.losses == ()
    assert json.dumps(done.body) == json.dumps(captured["body"])
    assert json.dumps(done.body, separators=(",", ":")) == json.dumps(
        captured["body"], separators=(",", ":"))
