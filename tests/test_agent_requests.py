"""Request shapes real agent clients send (Claude Code, Codex CLI, the SDKs): the emulator over
real HTTP and `toolwire check` read each the same way, refusing what the provider refuses and
nothing more, and the decoders and conversions carry every field or name what they lose.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest

from toolwire.conversion import convert
from toolwire.emulator import Emulator
from toolwire.transcript import Message, Reply, Usage
from wire_data import data, looped

ANSWER = Reply(message=Message.assistant("done"), stop="end_turn",
               usage=Usage(input_tokens=9, output_tokens=1))
ANTHROPIC = "/v1/messages"
RESPONSES = "/v1/responses"
LITE = {"x-openai-internal-codex-responses-lite": "1"}


def emulated(path: str, body: dict[str, Any], headers: dict[str, str] | None = None
             ) -> httpx2.Response:
    with Emulator([ANSWER]) as emu:
        return httpx2.post(emu.base_url + path, json=body, headers=headers or {})


def checked(tmp_path: Path, body: dict[str, Any]) -> tuple[int, str]:
    file = tmp_path / "body.json"
    file.write_text(json.dumps(body))
    proc = subprocess.run([sys.executable, "-m", "toolwire.cli", "check", str(file)],
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def system_turn(model: str, *, after: str = "user") -> dict[str, Any]:
    """Claude Code's shape: a system message with the turn's effort after the user's turn."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "fix the test"}]
    if after == "assistant":
        messages.append({"role": "assistant", "content": "on it"})
    messages.append({"role": "system", "content": [{"type": "text", "text": "Be brief."}],
                     "output_config": {"effort": "medium"}})
    return {"model": model, "max_tokens": 64, "system": "You are a coding agent.",
            "messages": messages}


# --- false refusals, and one statement of the rules for the emulator and check


def test_a_mid_conversation_system_message_is_taken_by_the_models_that_take_it(
        tmp_path: Path) -> None:
    body = system_turn("claude-opus-4-8")
    assert emulated(ANTHROPIC, body).status_code == 200
    assert checked(tmp_path, body)[0] == 0


def test_a_system_message_is_refused_where_the_provider_refuses_it(tmp_path: Path) -> None:
    for body, words in ((system_turn("claude-sonnet-4-5"), "got 'system'"),
                        (system_turn("claude-opus-4-8", after="assistant"), "must follow")):
        resp = emulated(ANTHROPIC, body)
        assert resp.status_code == 400 and words in resp.json()["error"]["message"]
        code, out = checked(tmp_path, body)
        assert code == 1 and words in out


def test_a_freeform_custom_tool_is_taken_with_a_list_input(tmp_path: Path) -> None:
    body = {"model": "gpt-5.5", "input": [{"type": "message", "role": "user",
                                            "content": [{"type": "input_text", "text": "hi"}]}],
            "tools": [{"type": "custom", "name": "apply_patch", "description": "patch files",
                       "format": {"type": "grammar", "syntax": "lark",
                                  "definition": "start: /.+/"}}]}
    assert emulated(RESPONSES, body).status_code == 200
    assert checked(tmp_path, body)[0] == 0


CODEX_LITE = {
    "model": "gpt-5.5", "tools": [], "tool_choice": "auto", "parallel_tool_calls": False,
    "input": [
        {"type": "additional_tools", "role": "developer", "tools": [
            {"type": "function", "name": "exec", "description": "run a command",
             "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
}


def test_tool_choice_with_added_tools_is_taken_where_the_header_names_that_shape() -> None:
    assert emulated(RESPONSES, CODEX_LITE, LITE).status_code == 200
    resp = emulated(RESPONSES, CODEX_LITE)
    assert resp.status_code == 400 and "tool_choice" in resp.json()["error"]["message"]


def test_check_refuses_a_text_block_before_a_tool_result_as_the_emulator_does(
        tmp_path: Path) -> None:
    body = {"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]},
        {"role": "user", "content": [
            {"type": "text", "text": "here:"},
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]}]}
    resp = emulated(ANTHROPIC, body)
    assert resp.status_code == 400
    code, out = checked(tmp_path, body)
    assert code == 1 and "tool_result blocks must come first" in out


def test_check_refuses_a_role_the_wire_does_not_have(tmp_path: Path) -> None:
    body = {"modelId": "m", "inferenceConfig": {"maxTokens": 64}, "messages": [
        {"role": "user", "content": [{"text": "hi"}]},
        {"role": "system", "content": [{"text": "Be brief."}]}]}
    assert emulated("/model/m/converse", body).status_code == 400
    code, out = checked(tmp_path, body)
    assert code == 1 and "[user, assistant]" in out
    body = {"model": "claude-sonnet-4-5", "max_tokens": 64, "system": "Be brief.",
            "messages": [{"role": "developer", "content": "hi"}]}
    assert emulated(ANTHROPIC, body).status_code == 400
    code, out = checked(tmp_path, body)
    assert code == 1 and "'developer'" in out


# --- read, and carried or named


LITELLM_GEMINI = {
    "contents": [
        {"role": "user", "parts": [{"text": "weather in Paris?"}]},
        {"role": "model", "parts": [{"function_call": {"name": "get_weather",
                                                       "args": {"city_name": "Paris"}},
                                     "thought_signature": "c2ln"}]},
        {"role": "user", "parts": [{"function_response": {
            "name": "get_weather", "response": {"result": "sunny"}}}]}],
    "tools": [{"function_declarations": [{
        "name": "get_weather", "description": "Weather for a city.",
        "parameters_json_schema": {"type": "object",
                                   "properties": {"city_name": {"type": "string"}}}}]}],
    "generation_config": {"max_output_tokens": 100},
}


def test_gemini_snake_case_calls_results_and_json_schemas_are_read() -> None:
    result = convert(LITELLM_GEMINI, "gemini-generate", "openai-chat")
    calls = result.body["messages"][1]["tool_calls"]
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        ("get_weather", {"city_name": "Paris"})]
    answer = result.body["messages"][2]
    assert answer["role"] == "tool" and answer["tool_call_id"] == calls[0]["id"]
    assert json.loads(answer["content"]) == {"result": "sunny"}
    assert result.body["tools"][0]["function"]["parameters"]["properties"] == {
        "city_name": {"type": "string"}}
    assert result.body["max_completion_tokens"] == 100
    # the thought signature cannot go to Chat Completions, and the report says so
    assert [(n.subject, "thoughtSignature" in n.detail) for n in result.losses] == [
        ("messages[1].parts[0]", True)]


def test_a_gemini_function_response_goes_back_to_gemini_as_it_came() -> None:
    body = {"contents": [
        {"role": "user", "parts": [{"text": "weather?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "w", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "w",
                                                         "response": {"result": "x"}}}]}]}
    again = convert(body, "gemini-generate", "gemini-generate").body
    assert again["contents"] == body["contents"]


def test_a_gemini_tools_own_fields_are_named_in_the_loss_report() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "tools": [
        {"functionDeclarations": [{"name": "f", "description": "d", "behavior": "NON_BLOCKING",
                                   "parameters": {"type": "OBJECT", "properties": {}}}]}]}
    losses = convert(body, "gemini-generate", "openai-chat").losses
    assert [n.subject for n in losses] == ["tools: f.behavior"]


def test_a_system_turns_output_config_goes_back_and_is_named_elsewhere() -> None:
    body = system_turn("claude-opus-4-8")
    again = convert(body, "anthropic-messages", "anthropic-messages").body
    assert again["messages"][-1]["output_config"] == {"effort": "medium"}
    losses = convert(body, "anthropic-messages", "openai-chat").losses
    assert [(n.subject, "output_config" in n.detail) for n in losses] == [("messages[1]", True)]


CACHED = {"model": "claude-sonnet-4-5", "max_tokens": 64, "system": "Be brief.",
          "messages": [{"role": "user", "content": [
              {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}],
          "tools": [{"name": "f", "description": "d", "input_schema": {"type": "object"},
                     "defer_loading": True, "eager_input_streaming": True}]}


@pytest.mark.parametrize("target", [w for w in looped() if w != "anthropic-messages"])
def test_cache_markers_and_tool_settings_are_named_when_they_cannot_go(target: str) -> None:
    result = convert(CACHED, "anthropic-messages", target)
    said = " ".join(f"{n.subject} {n.detail}" for n in result.losses)
    # Converse takes the marker as a cache point after the same block
    assert ("cache_control" in said) is not data(target).CACHE_MARKERS_TAKEN
    assert "eager_input_streaming" in said
    if target == "bedrock-converse":
        assert result.body["messages"][0]["content"][-1] == {"cachePoint": {"type": "default"}}
    assert result.request.tools[0].deferred  # carried, for the wires that defer tools
    tools = [n for n in result.losses if n.subject.startswith("tools:")]
    assert tools and all("the tools were sent" in n.detail for n in tools)  # the tools went


# --- conversions the target takes


CODEX_DEVELOPER = {
    "model": "gpt-5.5", "instructions": "You are Codex.",
    "input": [
        {"type": "message", "role": "developer",
         "content": [{"type": "input_text", "text": "Sandbox: workspace-write."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "message", "role": "developer", "content": "Approvals: never."}]}


@pytest.mark.parametrize("target", ["anthropic-messages", "bedrock-converse"])
def test_developer_messages_go_where_the_target_takes_them(target: str) -> None:
    from sdk_types import assert_wire_valid

    result = convert(CODEX_DEVELOPER, "openai-responses", target)
    assert_wire_valid(target, result.body)
    messages = result.body["messages"]
    assert [m["role"] for m in messages] == ["user"]
    said = json.dumps(result.body)
    assert "Sandbox: workspace-write." in said and "Approvals: never." in said
    assert "Sandbox" in json.dumps(result.body["system"])
    if target == "anthropic-messages":
        assert emulated(ANTHROPIC, result.body).status_code == 200


def test_an_ollama_system_message_with_no_images_is_the_system_prompt() -> None:
    body = {"model": "llama3", "messages": [{"role": "system", "content": "Be brief.",
                                              "images": []},
                                             {"role": "user", "content": "hi"}]}
    result = convert(body, "ollama-chat", "anthropic-messages")
    assert result.body["system"] == "Be brief."
    assert [m["role"] for m in result.body["messages"]] == ["user"]
    assert emulated(ANTHROPIC, result.body).status_code == 200


def test_converse_gets_alternating_turns_with_content() -> None:
    from sdk_types import assert_wire_valid

    request = {"model": "m", "messages": [
        {"role": "user", "content": "hi"}, {"role": "user", "content": "and more"},
        {"role": "assistant", "content": ""}, {"role": "user", "content": "well?"}]}
    result = convert(request, "openai-chat", "bedrock-converse")
    assert_wire_valid("bedrock-converse", result.body)
    assert [m["role"] for m in result.body["messages"]] == ["user"]
    assert [b["text"] for b in result.body["messages"][0]["content"]] == [
        "hi", "and more", "well?"]
    assert {n.kind for n in result.losses} >= {"role_changed", "part_dropped"}
    assert emulated("/model/m/converse", result.body).status_code == 200


def test_a_conversion_takes_the_model_the_url_named() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    result = convert(body, "gemini-generate", "ollama-chat", model="gemini-2.5-flash")
    assert result.body["model"] == "gemini-2.5-flash"


def test_a_conversion_carries_the_requests_betas_to_the_same_wire_only() -> None:
    body = system_turn("claude-opus-4-8")
    betas = "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27"
    headers = {"anthropic-beta": betas, "anthropic-version": "2023-06-01", "x-api-key": "k"}
    same = convert(body, "anthropic-messages", "anthropic-messages", headers=headers)
    assert same.headers["anthropic-beta"].split(",") == betas.split(",")
    assert same.headers["anthropic-version"] == "2023-06-01" and "x-api-key" not in same.headers
    other = convert(body, "anthropic-messages", "openai-responses", headers=headers)
    assert "anthropic-beta" not in other.headers
    assert [n.subject for n in other.losses if n.kind == "header_dropped"] == [
        "header anthropic-beta"]


# --- tools added and system messages mid-conversation, in the canonical transcript


CODEX_LITE_FULL = {
    **CODEX_LITE,
    "input": [
        {"type": "additional_tools", "role": "developer", "tools": [
            {"type": "namespace", "name": "shell", "tools": [
                {"type": "function", "name": "exec", "description": "run a command",
                 "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}]},
            {"type": "custom", "name": "apply_patch", "description": "patch files",
             "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"}}]},
        {"type": "message", "id": "msg_1", "role": "developer",
         "content": [{"type": "input_text", "text": "Sandbox: workspace-write."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
}


def test_codex_request_shape_goes_back_to_its_wire_unchanged() -> None:
    result = convert(CODEX_LITE_FULL, "openai-responses", "openai-responses")
    assert result.body == CODEX_LITE_FULL and result.losses == ()
    added = result.request.messages[0]
    assert (added.role, [(t.name, t.freeform) for t in added.tools]) == (
        "system", [("exec", False), ("apply_patch", True)])


@pytest.mark.parametrize("target", [w for w in looped() if w != "openai-responses"])
def test_tools_added_mid_conversation_are_offered_from_the_start_elsewhere(target: str) -> None:
    from sdk_types import assert_wire_valid

    result = convert(CODEX_LITE_FULL, "openai-responses", target)
    assert_wire_valid(target, result.body)
    assert "exec" in json.dumps(result.body.get("tools") or result.body.get("toolConfig"))
    said = {(n.kind, n.subject): n.detail for n in result.losses}
    assert ("tools_moved", "messages[0]") in said
    if target != "openai-chat":  # Chat Completions has custom tools too
        assert ("custom_tool", "apply_patch") in said  # a function tool taking its text as input


def test_the_docs_show_the_loss_table_the_code_writes() -> None:
    from toolwire.conversion import loss_table_markdown

    docs = (Path(__file__).parent.parent / "docs" / "wires.md").read_text()
    assert loss_table_markdown() in docs


# --- the captured requests of real clients (tests/fixtures/agents, with their SOURCES)


AGENTS = sorted((Path(__file__).parent / "fixtures" / "agents").glob("*.json"))


def without_any_of(body: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(body))
    for tool in out.get("tools") or ():
        for prop in (tool["function"]["parameters"].get("properties") or {}).values():
            if "anyOf" in prop:
                prop.pop("anyOf")
    return out


@pytest.mark.parametrize("path", AGENTS, ids=[p.stem for p in AGENTS])
def test_a_real_clients_request_is_taken_and_read_whole(path: Path) -> None:
    captured = json.loads(path.read_text())
    wire, body, headers = captured["wire"], captured["body"], captured["headers"]
    resp = emulated(captured["path"], body, headers)
    assert resp.status_code == 200, resp.text
    same = convert(body, wire, wire, headers=headers)
    assert same.losses == ()
    assert convert(same.body, wire, wire).request == same.request
    assert same.headers.get("anthropic-beta", "") == headers.get("anthropic-beta", "")


CONVERSIONS = [(path, target) for path in AGENTS for target in looped()
               if target != json.loads(path.read_text())["wire"]]


@pytest.mark.parametrize(("path", "target"), CONVERSIONS,
                         ids=[f"{p.stem}-{t}" for p, t in CONVERSIONS])
def test_a_real_clients_request_converts_to_every_wire_validly(path: Path, target: str) -> None:
    from sdk_types import assert_wire_valid
    from toolwire.codecs.registry import get_wire

    captured = json.loads(path.read_text())
    wire, body = captured["wire"], captured["body"]
    result = convert(body, wire, target, model="m", headers=captured["headers"])
    # Ollama's server takes anyOf in a property (its ToolProperty has AnyOf), which the
    # ollama package's Property type has not caught up with: checked without it
    assert_wire_valid(target, result.body if data(target).SDK_ANY_OF
                      else without_any_of(result.body))
    spec = get_wire(target)
    route = spec.path.replace("{model}", "m")
    assert emulated(route, result.body).status_code == 200, (target, result.losses)


# --- the model a URL named, given to the rules beside the body

_LATE_SYSTEM = {"max_tokens": 100, "messages": [
    {"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"},
    {"role": "user", "content": "again"}, {"role": "system", "content": "be brief"}]}
"""A system message after the first turn: taken by the models that take one there
(Claude Opus 4.8 on), refused by the others."""


def test_the_rules_judge_a_body_by_the_model_its_url_named() -> None:
    from toolwire.rules import check_request

    assert check_request(_LATE_SYSTEM, "anthropic-messages", model="claude-opus-4-8") == []
    (problem,) = check_request(_LATE_SYSTEM, "anthropic-messages", model="claude-sonnet-4-5")
    assert problem.rule == "refused" and "messages.3.role" in problem.message


def test_a_model_the_body_names_wins_over_the_one_given_beside_it() -> None:
    from toolwire.rules import check_request

    older = {**_LATE_SYSTEM, "model": "claude-sonnet-4-5"}
    (problem,) = check_request(older, "anthropic-messages", model="claude-opus-4-8")
    assert problem.rule == "refused" and "messages.3.role" in problem.message
    newer = {**_LATE_SYSTEM, "model": "claude-opus-4-8"}
    assert check_request(newer, "anthropic-messages", model="claude-sonnet-4-5") == []
