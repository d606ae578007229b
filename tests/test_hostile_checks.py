"""The statement of the rules (`toolwire.rules.check_request`, which the emulator and
`toolwire check` both read) is total: whatever body it is given, in any registered wire, it
names the problems it finds and raises nothing."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostile import mutate, seeds
from toolwire.rules import Problem, check_request
from wire_data import looped

BOUNDED = settings(max_examples=60, deadline=None, derandomize=True,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def checked(body: Any, wire: str) -> list[Problem]:
    problems = check_request(body, wire)
    assert all(isinstance(p, Problem) and p.message for p in problems)
    return problems


@pytest.mark.parametrize("wire", looped())
@BOUNDED
@given(rng=st.integers(0, 2**32).map(random.Random))
def test_a_damaged_request_gets_its_problems_named_never_an_exception(
        wire: str, rng: random.Random) -> None:
    for body in seeds(wire).requests:
        damaged = mutate(rng, body, objects=False, rounds=rng.randint(1, 4))
        if isinstance(damaged, dict):
            checked(damaged, wire)


@pytest.mark.parametrize("wire", looped())
@BOUNDED
@given(value=st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["role", "content", "tool_calls", "function", "arguments", "type",
                         "parts", "text", "name", "id", "input", "messages", "contents"]),
        inner, max_size=4),
    max_leaves=10))
def test_any_message_list_gets_its_problems_named(wire: str, value: Any) -> None:
    for key in ("messages", "input", "contents"):
        checked({"model": "m", "max_tokens": 8, key: value}, wire)
        checked({"model": "m", "max_tokens": 8, key: [value]}, wire)


@pytest.mark.parametrize("wire", looped())
def test_a_message_that_is_not_an_object_is_refused(wire: str) -> None:
    for key in ("messages", "input", "contents"):
        assert checked({"model": "m", "max_tokens": 8, key: [5]}, wire)


def test_a_refusal_names_the_message_the_provider_names_and_how_to_mend_it() -> None:
    body = {"model": "m", "max_tokens": 8, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": ""}]}]}
    refused = checked(body, "anthropic-messages")[0]
    assert (refused.rule, refused.index) == ("refused", 1)
    assert refused.message.startswith("messages.1.content.0")
    assert refused.fix == "change the body as the message says"
    unnamed = checked({"model": "m", "messages": [{"role": "user", "content": "hi"}]},
                      "anthropic-messages")[0]
    assert (unnamed.rule, unnamed.index) == ("refused", 0)
    assert unnamed.message == "max_tokens: Field required"


def test_a_body_the_wire_cannot_read_is_malformed_when_nothing_was_refused() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": 5}]}
    assert check_request(body, "ollama-chat") == [Problem(
        index=0, rule="malformed", message=check_request(body, "ollama-chat")[0].message,
        fix="send a body of the ollama-chat shape")]
    assert checked(body, "ollama-chat")[0].message.startswith(
        "malformed request: WireFormatError: ollama-chat request")
