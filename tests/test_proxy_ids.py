"""Call ids and sealed reasoning across two wires, with no state: properties that hold for any
id and any block."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strategies import json_values
from toolwire.codecs.registry import WIRES, get_wire
from toolwire.proxy.carry import open_seal, seal
from toolwire.proxy.ids import ENCODED, HASHED, from_client, longest, to_client


def accepted(call_id: str, wire: str) -> bool:
    pattern = get_wire(wire).rules.id_pattern
    return (0 < len(call_id) <= longest(wire)
            and (pattern is None or pattern.fullmatch(call_id) is not None))


@given(call_id=st.text(min_size=1, max_size=120), wire=st.sampled_from(WIRES))
def test_any_upstream_id_reaches_the_client_valid_and_comes_back_as_it_was(
        call_id: str, wire: str) -> None:
    shown = to_client(call_id, wire)
    assert accepted(shown, wire)
    assert to_client(call_id, wire) == shown  # the same every turn, in every process
    if not shown.startswith(HASHED):
        assert from_client(shown) == call_id


@given(call_id=st.from_regex(r"[a-zA-Z][a-zA-Z0-9_-]{0,30}", fullmatch=True),
       wire=st.sampled_from(WIRES))
def test_an_id_every_wire_takes_passes_unchanged(call_id: str, wire: str) -> None:
    if not call_id.startswith((ENCODED, HASHED)):
        assert to_client(call_id, wire) == call_id
        assert from_client(call_id) == call_id


def test_an_id_too_long_for_chat_completions_is_a_stable_digest_of_40_characters() -> None:
    long_id = "call_" + "x" * 45
    shown = to_client(long_id, "openai-chat")
    assert shown.startswith(HASHED) and len(shown) == 40
    assert to_client(long_id + "y", "openai-chat") != shown
    assert to_client(long_id, "anthropic-messages") == long_id


@pytest.mark.parametrize("wire", ["anthropic-messages", "bedrock-converse"])
def test_an_id_with_characters_the_wire_refuses_is_encoded(wire: str) -> None:
    shown = to_client("functions.get weather:0", wire)
    assert shown.startswith(ENCODED) and from_client(shown) == "functions.get weather:0"


@given(wire=st.sampled_from(WIRES), data=json_values)
def test_a_sealed_block_opens_to_the_same_wire_and_block(wire: str, data: object) -> None:
    sealed = seal(wire, data)  # type: ignore[arg-type]
    assert sealed.isascii() and " " not in sealed
    assert open_seal(sealed) == (wire, data)


@given(text=st.text())
def test_only_a_seal_opens(text: str) -> None:
    found = open_seal(text)
    assert found is None or text.startswith("twr1.")
