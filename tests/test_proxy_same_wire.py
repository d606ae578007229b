"""Same wire, same bytes: a request whose wire is the upstream's goes through the proxy byte
for byte, and the upstream's reply (whole, streamed, or an error) comes back byte for byte."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx2
import pytest

import wire_data
from proxy_harness import running_proxy
from toolwire.codecs.registry import get_wire
from toolwire.emulator import Emulator, Fault
from toolwire.http.providers import provider_for
from toolwire.transcript import Message, Reply, ToolCallPart

pytest.importorskip("uvicorn")

CALLS = Reply(message=Message(role="assistant", parts=(
    ToolCallPart(id="call_a1", name="get_weather", arguments={"city": "Zürich"}),
    ToolCallPart(id="call_b2", name="get_weather", arguments={"city": "Rome"}))),
    stop="tool_calls")

WIRES = {wire: body for wire, body in wire_data.table("PROXY_BODY").items() if body is not None}
"""Each wire's request as a client writes it (its test data), where the proxy passes the
bytes on as they are."""


def paths(wire: str) -> tuple[str, str]:
    """Where a client of ``wire`` sends a request, whole and streamed."""
    found = get_wire(wire)
    stream = found.stream_path.replace("{model}", "m") + wire_data.data(wire).STREAM_QUERY \
        if found.stream_path else found.path
    return found.path.replace("{model}", "m"), stream


def body_bytes(body: dict[str, object], stream: bool, wire: str) -> bytes:
    if stream and not get_wire(wire).stream_path:  # asked for in the body
        body = {**body, "stream": True}
    return json.dumps(body, indent=1).encode()


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator(lambda request, wire: CALLS) as emu:
        yield emu


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("wire", list(WIRES))
def test_the_bytes_pass_unchanged_both_ways(wire: str, stream: bool, emulator: Emulator,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in wire_data.data(wire).PROXY_ENV.items():
        monkeypatch.setenv(name, value)
    provider, (path, stream_path), body = provider_for(wire), paths(wire), WIRES[wire]
    where = stream_path if stream else path
    data = body_bytes(body, stream, wire)
    direct = httpx2.post(emulator.base_url + where, content=data,
                         headers={"content-type": "application/json"})
    with running_proxy(f"{provider}:m@{emulator.base_url}") as url:
        through = httpx2.post(url + where, content=data,
                              headers={"content-type": "application/json",
                                       "x-api-key": "the client's", "authorization": "Bearer b"})
    assert direct.status_code == through.status_code == 200
    assert emulator.received[-1].raw == data  # the request, byte for byte
    assert through.content == direct.content  # the reply, byte for byte
    assert "the client's" not in json.dumps(emulator.received[-1].headers)  # keys stay here
    assert emulator.received[-1].headers.get("authorization") != "Bearer b"


def test_an_upstream_error_passes_unchanged_with_its_status_and_retry_after() -> None:
    fault = Fault("rate_limit", retry_after=7)
    provider, (path, _), body = "anthropic", paths("anthropic-messages"), \
        WIRES["anthropic-messages"]
    data = body_bytes(body, False, "anthropic-messages")
    with Emulator([fault, fault]) as emu:
        direct = httpx2.post(emu.base_url + path, content=data)
        with running_proxy(f"{provider}:m@{emu.base_url}") as url:
            through = httpx2.post(url + path, content=data)
    assert through.status_code == direct.status_code == 429
    assert through.content == direct.content
    assert through.headers["retry-after"] == "7"


def test_a_body_naming_another_model_goes_on_with_the_upstream_model() -> None:
    provider, (path, _), body = "openai", paths("openai-chat"), WIRES["openai-chat"]
    with Emulator([CALLS]) as emu, running_proxy(f"{provider}:m@{emu.base_url}") as url:
        reply = httpx2.post(url + path, json={**body, "model": "gpt-9"})
        assert reply.status_code == 200
        assert emu.received[-1].body == {**body, "model": "m"}
