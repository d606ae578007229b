"""``/_toolwire/``: the proxy's page of conversations, read from its record folder (the state
its workers share), each row opening the conversation's ``explain`` report; behind the
proxy's key when it has one. Driven over loopback HTTP and in headless Chromium."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import httpx2
import pytest

from proxy_harness import running_proxy
from toolwire.emulator import Emulator

pytest.importorskip("uvicorn")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
TOOLS = [{"name": "read_file", "description": "Read a file.", "input_schema": {
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}]
SCRIPT: list[Any] = [
    {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "a.txt"}}],
     "usage": {"input_tokens": 1200, "output_tokens": 30}},
    {"text": "It says hello.", "usage": {"input_tokens": 1300, "output_tokens": 12}},
    {"text": "Hi.", "usage": {"input_tokens": 40, "output_tokens": 3}},
]


def two_conversations(url: str) -> None:
    """A two-turn tool run, streamed on its second turn, and a one-turn chat whose history
    answers a call it never made (a broken rule, which the upstream refuses)."""
    messages: list[Any] = [{"role": "user", "content": "What does a.txt say?"}]
    first = httpx2.post(url + "/v1/messages", json={
        "model": "m", "max_tokens": 100, "messages": messages, "tools": TOOLS}).json()
    messages += [{"role": "assistant", "content": first["content"]},
                 {"role": "user", "content": [{"type": "tool_result", "content": "hello",
                                               "tool_use_id": first["content"][0]["id"]}]}]
    second = httpx2.post(url + "/v1/messages", json={
        "model": "m", "max_tokens": 100, "messages": messages, "tools": TOOLS, "stream": True})
    assert second.status_code == 200
    other = httpx2.post(url + "/v1/chat/completions", json={"model": "m", "messages": [
        {"role": "user", "content": "Say hi"},
        {"role": "tool", "tool_call_id": "call_nobody", "content": "stray"}]})
    assert other.status_code == 400  # the upstream refuses it too


def test_the_page_lists_each_conversation_with_its_figures(tmp_path: Path) -> None:
    with Emulator(SCRIPT) as emu, \
            running_proxy(f"openai:gpt-4o@{emu.base_url}", record=str(tmp_path)) as url:
        two_conversations(url)
        page = httpx2.get(url + "/_toolwire/")
        rows = httpx2.get(url + "/_toolwire/conversations.json").json()
        reports = {r["key"]: httpx2.get(url + f"/_toolwire/c/{r['key']}") for r in rows}
        missing = httpx2.get(url + "/_toolwire/c/0123456789abcdef")
    assert page.status_code == 200 and "<table id=conversations>" in page.text
    assert len(rows) == 2
    chat, tools = rows  # the latest first
    assert tools["client"] == "anthropic-messages" and tools["upstream"] == "openai-chat"
    assert tools["turns"] == 2 and tools["violations"] == 0
    assert (tools["input_tokens"], tools["output_tokens"]) == (2500, 42)
    assert tools["cost"] is not None and tools["cost"] > 0  # priced as gpt-4o on openai
    assert tools["first_token_ms"] is not None and tools["first_token_ms"] > 0
    assert chat["client"] == "openai-chat" and chat["violations"] == 1
    assert chat["last_status"] == 400
    assert "call_nobody" in chat["problems"][0]
    for key, report in reports.items():
        assert report.status_code == 200, report.text
        assert f"conversation {key}" in report.text
    assert "read_file" in reports[tools["key"]].text
    assert missing.status_code == 404


def test_without_a_record_folder_the_page_says_how_to_get_one() -> None:
    with Emulator([]) as emu, running_proxy(f"openai:m@{emu.base_url}") as url:
        page = httpx2.get(url + "/_toolwire/")
    assert page.status_code == 200 and "--record DIR" in page.text


def test_the_page_needs_the_proxys_key_when_it_has_one(tmp_path: Path) -> None:
    with Emulator([]) as emu, running_proxy(f"openai:m@{emu.base_url}", key="sesame",
                                            record=str(tmp_path)) as url:
        without = httpx2.get(url + "/_toolwire/")
        data = httpx2.get(url + "/_toolwire/conversations.json")
        given = httpx2.get(url + "/_toolwire/?key=sesame")
    assert without.status_code == 401 and data.status_code == 401
    assert given.status_code == 200
    assert 'const suffix = "?key=sesame"' in given.text  # its own requests carry the key


def test_the_page_in_a_real_browser(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with Emulator(SCRIPT) as emu, \
            running_proxy(f"openai:gpt-4o@{emu.base_url}", record=str(tmp_path)) as url, \
            sync_playwright() as pw:
        two_conversations(url)
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update"])
        page = browser.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/_toolwire/")
        page.wait_for_selector("body[data-loaded='2']", timeout=20_000)
        rows = page.locator("#conversations tbody tr")
        assert rows.count() == 2
        texts = rows.all_inner_texts()
        assert "anthropic-messages" in texts[1] and "2500 / 42" in texts[1]
        assert "call_nobody" in texts[0]
        rows.nth(1).locator("a").click()
        page.wait_for_selector(".entry", timeout=20_000)
        assert page.locator(".entry").count() >= 4  # tools, task, call, result, answer
        browser.close()
    assert errors == []
