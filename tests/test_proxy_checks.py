"""What the proxy checks on every request: the transcript rules (logged, and refused with
``strict``), the client's key, the body, the path; and what ``record`` writes."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from proxy_harness import running_proxy
from toolwire.emulator import Emulator
from toolwire.proxy.app import RULE_HEADER

pytest.importorskip("uvicorn")

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]
# A call answered never: the user speaks again before the tool message.
UNANSWERED = {"model": "m", "tools": TOOLS, "messages": [
    {"role": "user", "content": "Weather in Rome?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}}]},
    {"role": "user", "content": "Well?"}]}


def test_strict_refuses_a_broken_transcript_in_the_client_wire_naming_the_rule() -> None:
    with Emulator([{"text": "never sent"}]) as emu, \
            running_proxy(f"anthropic:m@{emu.base_url}", strict=True) as url:
        reply = httpx2.post(url + "/v1/chat/completions", json=UNANSWERED)
        assert emu.received == []  # never sent on
    assert reply.status_code == 400
    assert reply.headers[RULE_HEADER] == "missing_result"
    error = reply.json()["error"]  # Chat Completions' error shape
    assert "missing_result" in error["message"] and "call_1" in error["message"]
    assert error["type"] == "invalid_request_error"


def test_without_strict_a_broken_transcript_is_logged_and_sent_on(
        capfd: pytest.CaptureFixture[str]) -> None:
    with Emulator([{"text": "sent"}]) as emu, \
            running_proxy(f"openai:m@{emu.base_url}") as url:
        reply = httpx2.post(url + "/v1/chat/completions", json=UNANSWERED)
        assert len(emu.received) == 1
    err = capfd.readouterr().err
    assert "missing_result" in err and "call_1" in err
    assert reply.status_code == 400  # the emulator refuses it, as OpenAI does
    assert RULE_HEADER not in reply.headers


KEYED = {
    "anthropic x-api-key": ("/v1/messages", {"x-api-key": "s3cret"}, ""),
    "chat bearer": ("/v1/chat/completions", {"authorization": "Bearer s3cret"}, ""),
    "gemini header": ("/v1beta/models/m:generateContent", {"x-goog-api-key": "s3cret"}, ""),
    "gemini query": ("/v1beta/models/m:generateContent", {}, "?key=s3cret"),
}
BODIES = {
    "/v1/messages": {"model": "m", "max_tokens": 20,
                     "messages": [{"role": "user", "content": "hi"}]},
    "/v1/chat/completions": {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
    "/v1beta/models/m:generateContent": {"contents": [{"role": "user",
                                                       "parts": [{"text": "hi"}]}]},
}


@pytest.mark.parametrize("way", list(KEYED))
def test_a_key_is_taken_the_way_each_wire_presents_it(way: str) -> None:
    path, headers, query = KEYED[way]
    with Emulator([{"text": "hello"}, {"text": "hello"}]) as emu, \
            running_proxy(f"openai-responses:m@{emu.base_url}", key="s3cret") as url:
        refused = httpx2.post(url + path, json=BODIES[path])
        wrong = httpx2.post(url + path, json=BODIES[path],
                            headers={k: v.replace("s3cret", "guess") for k, v in
                                     headers.items()} or {"x-api-key": "guess"})
        taken = httpx2.post(url + path + query, json=BODIES[path], headers=headers)
        assert len(emu.received) == 1
    assert refused.status_code == wrong.status_code == 401
    assert "needs its key" in refused.text and "not this proxy's key" in wrong.text
    assert taken.status_code == 200, taken.text


def test_an_aws_signature_is_refused_with_what_to_use_instead() -> None:
    with running_proxy("anthropic:m@http://127.0.0.1:9", key="s3cret") as url:
        reply = httpx2.post(url + "/model/m/converse", json={"messages": []}, headers={
            "authorization": "AWS4-HMAC-SHA256 Credential=AKIA/20260101/us-east-1/bedrock"})
    assert reply.status_code == 401
    assert "AWS_BEARER_TOKEN_BEDROCK" in reply.json()["message"]  # Bedrock's error shape


@pytest.mark.parametrize(("path", "data", "status", "words"), [
    ("/v1/messages", b"{not json", 400, "not valid JSON"),
    ("/v1/messages", b"[1, 2]", 400, "must be a JSON object"),
    ("/v1/messages", b'{"messages": "hi"}', 400, "malformed request"),
    ("/v1/nothing-here", b"{}", 404, "no wire is served"),
])
def test_a_bad_request_is_answered_in_the_client_wire(path: str, data: bytes, status: int,
                                                       words: str) -> None:
    with running_proxy("openai:m@http://127.0.0.1:9") as url:
        reply = httpx2.post(url + path, content=data, headers={"anthropic-version": "1"})
    assert reply.status_code == status
    body = reply.json()
    assert body["type"] == "error" and words in body["error"]["message"]  # Anthropic's shape


def test_a_body_over_the_bound_is_refused_with_413() -> None:
    with running_proxy("openai:m@http://127.0.0.1:9", max_body=1000) as url:
        reply = httpx2.post(url + "/v1/chat/completions", content=b"x" * 5000)
    assert reply.status_code == 413 and "1000 bytes" in reply.text


@pytest.mark.parametrize(("path", "headers", "key", "value"), [
    ("/v1/models", {"anthropic-version": "2023-06-01"}, ("data", 0, "type"), "model"),
    ("/v1/models", {"authorization": "Bearer x"}, ("data", 0, "object"), "model"),
    ("/v1beta/models", {}, ("models", 0, "name"), "models/m"),
    ("/api/tags", {}, ("models", 0, "name"), "m"),
])
def test_the_model_list_takes_the_shape_the_client_asks_for(
        path: str, headers: dict[str, str], key: tuple[object, ...], value: str) -> None:
    with running_proxy("openai:m@http://127.0.0.1:9") as url:
        found = httpx2.get(url + path, headers=headers).json()
    for step in key:
        found = found[step]  # type: ignore[index]
    assert found == value


def test_record_writes_each_conversation_as_a_cassette_and_logs_every_request(
        tmp_path: Path) -> None:
    folder = tmp_path / "records"

    def ask(url: str, first: str, then: str | None = None) -> None:
        messages = [{"role": "user", "content": first}]
        if then is not None:
            messages += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": then}]
        reply = httpx2.post(url + "/v1/messages", json={"model": "m", "max_tokens": 20,
                                                        "messages": messages})
        assert reply.status_code == 200, reply.text

    with Emulator([{"text": "ok"}] * 3) as emu, \
            running_proxy(f"openai:m@{emu.base_url}", record=str(folder)) as url:
        ask(url, "first conversation")
        ask(url, "second conversation")
        ask(url, "first conversation", "and a second turn")
    cassettes = sorted(folder.glob("*.json"))
    assert len(cassettes) == 2
    turns = sorted(len(json.loads(c.read_text())["interactions"]) for c in cassettes)
    assert turns == [1, 2]
    log = [json.loads(line) for line in (folder / "proxy.jsonl").read_text().splitlines()]
    assert [e["client"] for e in log] == ["anthropic-messages"] * 3
    assert {e["upstream"] for e in log} == {"openai-chat"}
    assert log[0]["conversation"] == log[2]["conversation"] != log[1]["conversation"]
    from toolwire.cli.app import main

    assert main(["explain", str(cassettes[0])]) == 0  # explain reads what was recorded


def test_a_route_picks_the_upstream_by_the_model_name_the_client_asks_for() -> None:
    ask = {"max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]}
    with Emulator(lambda request, wire: {"text": f"from {wire}"}) as emu, \
            running_proxy(f"openai:m@{emu.base_url}", routes=(
                ("claude-*", f"anthropic:claude-real@{emu.base_url}"),
                ("gemini-?", f"gemini:g@{emu.base_url}"))) as url:
        routed = httpx2.post(url + "/v1/messages", json={**ask, "model": "claude-haiku"})
        assert (emu.received[-1].wire, emu.received[-1].body["model"]) == (
            "anthropic-messages", "claude-real")
        other = httpx2.post(url + "/v1/messages", json={**ask, "model": "gpt-9"})
        assert emu.received[-1].wire == "openai-chat"
        by_path = httpx2.post(url + "/v1beta/models/gemini-3:generateContent", json={
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
        assert emu.received[-1].path == "/v1beta/models/g:generateContent"
        listed = httpx2.get(url + "/v1/models").json()["data"]
    assert routed.json()["content"][0]["text"] == "from anthropic-messages"
    assert other.json()["content"][0]["text"] == "from openai-chat"
    assert by_path.status_code == 200
    assert [m["id"] for m in listed] == ["m"]  # patterns with wildcards name no model


def test_pass_client_keys_sends_each_clients_own_key_upstream(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ask = {"model": "m", "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]}
    with running_proxy("openai:gpt-5", pass_client_keys=True):
        pass  # starts with no OPENAI_API_KEY: each client brings its own (nothing is sent)
    with Emulator([{"text": "a"}, {"text": "b"}]) as emu, \
            running_proxy(f"openai:m@{emu.base_url}", pass_client_keys=True) as url:
        httpx2.post(url + "/v1/messages", json=ask, headers={"x-api-key": "client-one"})
        first = emu.received[-1].headers.get("authorization")
        httpx2.post(url + "/v1/messages", json=ask)
        second = emu.received[-1].headers.get("authorization")
    assert first == "Bearer client-one"
    assert second is None  # no key of the client's, none of the proxy's


def test_a_full_record_folder_takes_no_new_conversation(tmp_path: Path) -> None:
    folder = tmp_path / "records"
    ask = {"model": "m", "max_tokens": 20}
    with Emulator([{"text": "ok"}] * 3) as emu, \
            running_proxy(f"openai:m@{emu.base_url}", record=str(folder), record_max=1) as url:
        for words in ("one", "two", "one"):
            reply = httpx2.post(url + "/v1/messages", json={**ask, "messages": [
                {"role": "user", "content": words}]})
            assert reply.status_code == 200
    # the first conversation filled it; the second went unrecorded; the first went on
    cassettes = list(folder.glob("*.json"))
    assert len(cassettes) == 1
    assert len(json.loads(cassettes[0].read_text())["interactions"]) == 2
    log = [json.loads(line) for line in (folder / "proxy.jsonl").read_text().splitlines()]
    assert [e.get("event") for e in log].count("record_full") == 1
    assert len([e for e in log if "client" in e]) == 3
