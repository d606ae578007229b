"""``--fallback``: a request whose model fails in a way another model may not (the fallback
chain's table, `toolwire.failover.FAILURES`) goes to the next model, in its own wire or
another, until the first byte of the reply has reached the client; a failure that a person
must fix goes back as it came, and a stream that broke after its first byte is not started
over."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from proxy_harness import running_proxy
from toolwire.emulator import Emulator, Fault
from toolwire.proxy.forward import FALLBACK_HEADER
from toolwire.proxy.record import LOG_NAME
from toolwire.transcript import Message, Reply, TextPart

pytest.importorskip("uvicorn")
anthropic = pytest.importorskip("anthropic")

ASK = {"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}


def text_of(reply: httpx2.Response, stream: bool) -> str:
    if not stream:
        return "".join(b.get("text", "") for b in reply.json()["content"])
    said = []
    for line in reply.text.splitlines():
        if line.startswith("data: "):
            event = json.loads(line[6:])
            if event.get("type") == "content_block_delta":
                said.append(event["delta"].get("text", ""))
    return "".join(said)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(("first_wire", "fault"), [
    ("openai", "overloaded"), ("anthropic", "rate_limit"), ("openai-responses", "server_error")])
def test_a_failure_that_moves_on_goes_to_the_next_model(first_wire: str, fault: str,
                                                        stream: bool) -> None:
    """The first model is tried across wires or byte for byte (the anthropic case passes
    through); either way its failure hands the request to the fallback."""
    with Emulator([Fault(fault)]) as first, \
            Emulator([{"text": "the fallback answers"}]) as second, \
            running_proxy(f"{first_wire}:m@{first.base_url}",
                          fallbacks=(f"gemini:g@{second.base_url}",)) as url:
        reply = httpx2.post(url + "/v1/messages", json={**ASK, "stream": stream},
                            timeout=60)
    assert reply.status_code == 200, reply.text
    assert text_of(reply, stream) == "the fallback answers"
    assert len(first.received) == 1 and len(second.received) == 1
    assert second.received[0].wire == "gemini-generate"
    said = reply.headers[FALLBACK_HEADER]
    assert said.startswith(f"gemini:g@{second.base_url}")
    why = {"rate_limit": "rate_limited"}.get(fault, fault)  # the chain's name for it
    assert f"{first_wire}:m@{first.base_url} ({why})" in said


def test_each_fallback_is_tried_in_order_until_one_answers(tmp_path: Path) -> None:
    with Emulator([Fault("overloaded")]) as one, Emulator([Fault("server_error")]) as two, \
            Emulator([{"text": "third time"}]) as three, \
            running_proxy(f"openai:m@{one.base_url}", record=str(tmp_path / "records"),
                          fallbacks=(f"openai:m@{two.base_url}",
                                     f"anthropic:m@{three.base_url}")) as url:
        client = anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0)
        raw = client.messages.with_raw_response.create(**ASK)
        message = raw.parse()
    assert message.content[0].text == "third time"  # type: ignore[union-attr]
    assert [len(e.received) for e in (one, two, three)] == [1, 1, 1]
    assert "(overloaded)" in raw.headers[FALLBACK_HEADER]
    assert "(server_error)" in raw.headers[FALLBACK_HEADER]
    logged = [json.loads(line) for line in
              (tmp_path / "records" / LOG_NAME).read_text().splitlines()]
    assert logged[-1]["model"] == f"anthropic:m@{three.base_url}"
    assert logged[-1]["passed_over"] == [f"openai:m@{one.base_url} (overloaded)",
                                         f"openai:m@{two.base_url} (server_error)"]


@pytest.mark.parametrize("first_wire", ["anthropic", "openai"])
def test_a_failure_a_person_must_fix_comes_back_as_it_came(first_wire: str) -> None:
    with Emulator([Fault("bad_request", message="that field is wrong")]) as first, \
            Emulator([{"text": "never asked"}]) as second, \
            running_proxy(f"{first_wire}:m@{first.base_url}",
                          fallbacks=(f"openai:m@{second.base_url}",)) as url:
        reply = httpx2.post(url + "/v1/messages", json=ASK, timeout=60)
    assert reply.status_code == 400
    assert "that field is wrong" in reply.text
    assert reply.json()["type"] == "error"  # in the client's wire
    assert second.received == [] and FALLBACK_HEADER not in reply.headers


def test_a_stream_that_broke_after_its_first_byte_is_not_started_over() -> None:
    broken = Fault("drop_mid_stream", reply=Reply(message=Message(
        role="assistant", parts=[TextPart(text="a long answer " * 40)])))
    with Emulator([broken]) as first, Emulator([{"text": "never asked"}]) as second, \
            running_proxy(f"openai:m@{first.base_url}",
                          fallbacks=(f"openai:m@{second.base_url}",)) as url:
        reply = httpx2.post(url + "/v1/messages", json={**ASK, "stream": True}, timeout=60)
    assert reply.status_code == 200  # the stream had begun: its status was sent
    assert "a long answer" in text_of(reply, True)
    assert '"type": "error"' in reply.text or '"type":"error"' in reply.text
    assert second.received == []
