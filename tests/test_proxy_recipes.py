"""The SDK recipes of docs/proxy.md run as written: each recipe's Python block makes the
client (the proxy's address put in for port 8800), which holds a two-turn conversation with
parallel tool calls through the proxy to the emulator in the recipe's upstream wire, whole and
streamed; the recipe's ``Loses:`` line is what the proxy's record reported. And what a Gemini
upstream needs back on its calls reaches it whatever the client's wire could keep."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from proxy_harness import documented_losses, recipe, recorded_losses, running_proxy
from test_proxy_sdks import CITIES, CLIENTS, ON_CALLS, answer, chat_run, ollama_run
from toolwire.emulator import Emulator

RECIPES: dict[str, tuple[str, Callable[..., Any]]] = {
    "The openai SDK on Gemini": ("gemini", chat_run),
    "An Ollama client on Bedrock": ("bedrock", ollama_run),
}


def recipe_client(title: str, url: str) -> Any:
    """The client the recipe's Python block makes, pointed at ``url`` instead of port 8800."""
    block = re.search(r"```python\n(.*?)```", recipe(title), re.S)
    assert block is not None, f"the recipe {title!r} has no Python block"
    scope: dict[str, Any] = {}
    exec(block.group(1).replace("http://127.0.0.1:8800", url), scope)
    return scope["client"]


@pytest.mark.parametrize("title", RECIPES)
def test_an_sdk_recipe_runs_as_written_and_loses_what_it_says(
        title: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    provider, run = RECIPES[title]
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "upstream-token")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("GEMINI_API_KEY", "upstream-key")
    assert f"toolwire proxy --model {provider}:" in recipe(title)
    with Emulator(answer) as emu, \
            running_proxy(f"{provider}:m@{emu.base_url}", record=str(tmp_path)) as url:
        turns = [run(url, stream, recipe_client(title, url)) for stream in (False, True)]
    for (calls, _), (_, text) in turns:
        assert [args for _, args in calls] == [{"city": c} for c in CITIES]
        assert text == "Rome is sunny, Oslo is cold."
    assert recorded_losses(tmp_path) == documented_losses(title)


@pytest.mark.parametrize(("client", "kept"), [
    ("openai-chat", "skip_thought_signature_validator"),  # no field for it: the placeholder
    ("ollama-chat", "skip_thought_signature_validator"),
    ("anthropic-messages", ON_CALLS["gemini-generate"]["thoughtSignature"]),  # its own, back
])
def test_gemini_gets_a_signature_on_its_calls_whatever_the_client_could_keep(
        client: str, kept: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Gemini's thinking models refuse a turn whose calls lost their thought signature; the
    placeholder Gemini documents for history it did not write stands in where the client's
    wire could not keep the signature."""
    monkeypatch.setenv("GEMINI_API_KEY", "upstream-key")
    with Emulator(answer) as emu, running_proxy(f"gemini:m@{emu.base_url}") as url:
        CLIENTS[client](url, False)
        sent = emu.received[-1].body
    calls = [p for c in sent["contents"] if c["role"] == "model" for p in c["parts"]
             if "functionCall" in p]
    assert len(calls) == 2
    assert calls[0].get("thoughtSignature") == kept
    assert "thoughtSignature" not in calls[1]  # one signature a turn, on its first call
