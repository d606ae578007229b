"""``toolwire mcp-serve --transport http`` keeps its SSE streams resumable on 2025-11-25: each
call's stream opens with a priming event (an id, empty data and a ``retry`` delay), a tool may
end its stream mid-call, and a client reconnecting with ``Last-Event-ID`` gets the rest. On
2026-07-28 there is no resumability: the same call simply answers on its own stream."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from test_mcp_conformance import serve

VERSION = "2025-11-25"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    proc, found = serve()
    try:
        yield found
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def sse(response: httpx.Response) -> Iterator[dict[str, str]]:
    """The SSE events of a response as they come, each as its fields (id, retry, data...)."""
    current: dict[str, str] = {}
    for line in response.iter_lines():
        if line:
            field, _, value = line.partition(":")
            current[field] = current.get(field, "") + value.removeprefix(" ")
        elif current:
            yield current
            current = {}
    if current:
        yield current


def until_result(response: httpx.Response) -> list[dict[str, str]]:
    """The events of a stream up to one carrying a result (a resumed stream stays open)."""
    seen = []
    for event in sse(response):
        seen.append(event)
        if '"result"' in event.get("data", ""):
            break
    return seen


def rpc(id_: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def open_session(http: httpx.Client, url: str) -> dict[str, str]:
    """The headers of a new 2025-11-25 session's requests."""
    accept = {"Accept": "application/json, text/event-stream"}
    opened = http.post(url, headers=accept, json=rpc(1, "initialize", {
        "protocolVersion": VERSION, "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"}}))
    headers = {**accept, "mcp-session-id": opened.headers["mcp-session-id"],
               "mcp-protocol-version": VERSION}
    http.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return headers


def test_a_closed_stream_resumes_from_its_last_event_in_its_own_session(url: str) -> None:
    call = rpc(2, "tools/call", {"name": "test_reconnection", "arguments": {}})
    with httpx.Client(timeout=30) as http:
        mine, other = open_session(http, url), open_session(http, url)
        with http.stream("POST", url, headers=mine, json=call) as first:
            before = list(sse(first))
        last = before[-1]["id"]
        with http.stream("GET", url, headers={**mine, "Last-Event-ID": last}) as again:
            after = until_result(again)
        with http.stream("GET", url, headers={**other, "Last-Event-ID": last}) as stolen:
            theirs = until_result(stolen)  # another session's events are not replayed
    priming = before[0]
    assert priming["id"] and priming.get("data", "") == "" and priming["retry"] == "1000"
    assert not any('"result"' in e.get("data", "") for e in before)  # cut before the answer
    assert not any(e.get("data") for e in theirs)
    answers = [json.loads(e["data"]) for e in after if e.get("data")]
    assert answers[-1]["id"] == 2
    assert answers[-1]["result"]["content"][0]["text"] == "Reconnection test completed successfully"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_sdk_client_gets_the_answer_of_a_call_whose_stream_ended(url: str,
                                                                          mode: str) -> None:
    async with Client(url, mode=mode) as client:
        with anyio.fail_after(30):
            result = await client.call_tool("test_reconnection", {})
    assert result.content[0].text == "Reconnection test completed successfully"  # type: ignore[union-attr]
