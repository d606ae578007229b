"""Any body at any path: the proxy answers in the path's wire, with a JSON error body and a
status it chose, never a 500 with a Python message."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proxy_harness import running_proxy

pytest.importorskip("uvicorn")

PATHS = [
    "/v1/messages", "/v1/messages/count_tokens", "/v1/chat/completions", "/v1/responses",
    "/v1/responses/input_tokens", "/api/chat", "/v1beta/models/m:generateContent",
    "/v1beta/models/m:streamGenerateContent?alt=sse", "/v1beta/models/m:countTokens",
    "/model/m/converse", "/model/m/converse-stream", "/model/m/invoke", "/v1/anything",
]

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["model", "messages", "input", "contents", "role", "content", "tools",
                         "stream", "max_tokens", "system", "type", "parts", "text"]) | st.text(),
        inner, max_size=5),
    max_leaves=20)
BODIES = st.binary(max_size=200) | JSON_VALUES.map(lambda v: json.dumps(v).encode())


@pytest.fixture(scope="module")
def proxy() -> Iterator[str]:
    with running_proxy("anthropic:m@http://127.0.0.1:9") as url:  # nothing listens there
        yield url


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(PATHS), body=BODIES)
def test_any_body_at_any_path_gets_an_answer_the_proxy_chose(proxy: str, path: str,
                                                           body: bytes) -> None:
    reply = httpx2.post(proxy + path, content=body, timeout=60)
    assert reply.status_code != 500, reply.text
    if reply.headers.get("content-type", "").startswith("application/json"):
        answer = reply.json()
        assert "Traceback" not in reply.text
        if reply.status_code >= 400:
            assert isinstance(answer, (dict, list)) and answer
