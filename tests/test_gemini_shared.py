"""What the two Gemini wires share (`toolwire.codecs.google_shared`), read the same by both.

Google's error body is ``google.rpc.Status``: ``code`` is the HTTP status as an integer, so a
boolean there is no status; the Interactions API puts a word in ``code`` instead. A
``RetryInfo.retryDelay`` is a ``Duration``: text such as ``"37s"``, or seconds and nanos.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire.codecs import get_codec, google_shared
from toolwire.errors import ProviderError, RateLimitError

WIRES = ("gemini-generate", "gemini-interactions")


def _decode(wire: str, status: int, body: Any) -> ProviderError:
    return get_codec(wire).decode_error(status, body)


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("code", [True, False])
def test_a_boolean_code_is_no_status(wire: str, code: bool) -> None:
    body = {"error": {"code": code, "message": "quota used up", "status": "RESOURCE_EXHAUSTED"}}
    error = _decode(wire, 0, body)
    assert error.status == 0 and type(error.status) is int
    assert error.error_type == "RESOURCE_EXHAUSTED" and error.wire == wire
    # the status the reply came with stands
    assert type(_decode(wire, 429, body)) is RateLimitError


@pytest.mark.parametrize("wire", WIRES)
def test_an_integer_code_is_the_status_and_a_word_the_type(wire: str) -> None:
    error = _decode(wire, 0, {"error": {"code": 429, "message": "slow down"}})
    assert type(error) is RateLimitError and error.status == 429
    worded = _decode(wire, 400, {"error": {"code": "invalid_request", "message": "bad input"}})
    assert worded.error_type == "invalid_request" and worded.status == 400


def _retry_info(delay: Any) -> dict[str, Any]:
    return {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED",
                      "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                   "retryDelay": delay}]}}


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize(("delay", "seconds"), [
    ("37s", 37.0), ("1.5s", 1.5), ({"seconds": 2, "nanos": 500_000_000}, 2.5),
    ({"seconds": "3"}, 3.0), ({"seconds": "soon"}, None), ({"seconds": True}, None),
    ({"seconds": -4}, None), ({"nanos": [1]}, None), ("in a while", None),
])
def test_retry_delay_in_both_forms(wire: str, delay: Any, seconds: float | None) -> None:
    assert _decode(wire, 429, _retry_info(delay)).retry_after == seconds


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.sampled_from(["seconds", "nanos", "@type"]), inner,
                                      max_size=3), max_leaves=8))
def test_any_retry_delay_reads_without_failing(delay: Any) -> None:
    found = google_shared.retry_delay([{"@type": "google.rpc.RetryInfo", "retryDelay": delay}])
    assert found is None or found >= 0


def test_the_wires_answer_with_one_error_body() -> None:
    for status in (400, 429, 503, 418):
        bodies = [get_codec(wire).encode_error(status, "no") for wire in WIRES]
        assert bodies[0] == bodies[1] == google_shared.encode_error(status, "no")
        assert _decode(WIRES[0], status, bodies[0]).status == status
