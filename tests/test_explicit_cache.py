"""Gemini's explicit cached contents, as an option, over loopback HTTP against the emulator.

With ``Cache(explicit=True)`` the client makes a cached content holding the system
instruction, the tools and the conversation up to its latest message, sends requests naming it
with only the contents after it, makes a larger one when the conversation has outgrown it, and
makes it anew when it is about to expire; the emulator refuses what the API refuses and bills
the tokens a cache holds as cache reads.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from toolwire import Agent, Cache, Message, Reply, Request, ToolCallPart
from toolwire.emulator import Emulator
from toolwire.events import ReplyReceived, WireNotes
from toolwire.http.cached_contents import collection_of, ttl_seconds
from toolwire.http.client import model as make_model
from toolwire.schema.tool import Tool

SYSTEM = "You are a careful assistant. " + " ".join(
    f"Rule {n}: read every file before changing it, and say what you changed." for n in range(80))
ECHO = Tool(name="echo", description="Echo text back.",
            input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
            fn=lambda text: text * 20)
FIXED = ("systemInstruction", "tools", "toolConfig")


def calls(turns: int, size: int = 1) -> list[Reply]:
    return [Reply(message=Message(role="assistant", parts=(
        ToolCallPart(id=f"c{k}", name="echo", arguments={"text": f"line {k} " * size}),)),
        stop="tool_calls") for k in range(turns)] + [Reply(message=Message.assistant("Done."))]


GOOGLE = {"GOOGLE_CLOUD_PROJECT": "proj-1", "GOOGLE_CLOUD_LOCATION": "europe-west4",
          "GOOGLE_CLOUD_ACCESS_TOKEN": "ya29.token"}


async def run(cache: Cache, replies: list[Reply], *, host: str = "gemini",
              stream: bool = False, **emulator: Any) -> tuple[Emulator, list[Any], list[str]]:
    usage: list[Any] = []
    notes: list[str] = []

    def on_event(event: object) -> None:
        if isinstance(event, ReplyReceived):
            usage.append(event.reply.usage)
        elif isinstance(event, WireNotes):
            notes.extend(n for n in event.notes if n.startswith("explicit_cache"))

    async with Emulator(replies, bill=True, **emulator) as emu:
        model = make_model(f"{host}:gemini-2.5-flash@{emu.base_url}", env=GOOGLE)
        result = await Agent(model=model, tools=[ECHO], system=SYSTEM, cache=cache,
                             stream=stream, on_event=on_event).arun("Go.")
        await model.aclose()
        emu.assert_done()
    assert result.ok and result.answer == "Done."
    return emu, usage, notes


PLACES = {"gemini": ("/v1beta/cachedContents", "models/gemini-2.5-flash", "cachedContents/"),
          "vertex": ("/v1/projects/proj-1/locations/europe-west4/cachedContents",
                     "projects/proj-1/locations/europe-west4/publishers/google/models/"
                     "gemini-2.5-flash", "projects/proj-1/locations/europe-west4/cachedContents/")}


@pytest.mark.parametrize("host", list(PLACES))
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_run_makes_one_cache_and_every_request_names_it(host: str, stream: bool
                                                                ) -> None:
    emu, usage, notes = await run(Cache(explicit=True, ttl="10m"), calls(3), host=host,
                                  stream=stream)
    path, resource, prefix = PLACES[host]
    made = [r for r in emu.received if r.path.endswith("/cachedContents")]
    asked = [r for r in emu.received if "GenerateContent" in r.path or "generateContent"
             in r.path]
    assert [r.path for r in made] == [path] and len(asked) == 4
    sent = made[0].body
    assert sent["model"] == resource and sent["ttl"] == "600s"
    assert SYSTEM in json.dumps(sent["systemInstruction"]) and sent["tools"]
    assert len(sent["contents"]) == 0  # made before the first request: the fixed part only
    name = emu.received[1].body["cachedContent"]
    assert name.startswith(prefix) and len(emu.cached) == 1
    for request in asked:  # the cached fields are never repeated; the contents after the cache
        assert request.body["cachedContent"] == name
        assert not set(FIXED) & set(request.body)
    assert [len(r.body["contents"]) for r in asked] == [1, 3, 5, 7]
    held = usage[0].cache_read_tokens
    assert held > 1_024 and all(u.cache_read_tokens == held for u in usage)
    assert all(u.input_tokens > held for u in usage)
    assert notes == [f"explicit_cache: made {name}, holding 0 of the contents"]


async def test_a_conversation_that_outgrows_its_cache_gets_a_larger_one() -> None:
    emu, usage, _ = await run(Cache(explicit=True), calls(6, size=60))
    made = [r.body for r in emu.received if r.path.endswith("/cachedContents")]
    assert 2 <= len(made) <= 4 and "ttl" not in made[0]  # the provider's default hour
    held = [len(m["contents"]) for m in made]
    assert held == sorted(held) and held[0] == 0 and held[-1] > 2
    names = [r.body["cachedContent"] for r in emu.received if "cachedContent" in r.body]
    assert len(set(names)) == len(made)
    reads = [u.cache_read_tokens for u in usage]
    assert reads == sorted(reads) and reads[-1] > reads[0]  # later caches hold more


async def test_a_cache_about_to_expire_is_made_anew() -> None:
    now = [0.0]
    replies = calls(2)

    def later(request: Request, wire: str) -> Reply:  # each request 150 s after the last
        now[0] += 150.0
        return replies.pop(0)

    async with Emulator(later, bill=True, clock=lambda: now[0]) as emu:
        model = make_model(f"gemini:gemini-2.5-flash@{emu.base_url}", env={})
        assert model._explicit is not None
        model._explicit.clock = lambda: now[0]
        result = await Agent(model=model, tools=[ECHO], system=SYSTEM,
                             cache=Cache(explicit=True, ttl="5m")).arun("Go.")
        await model.aclose()
    assert result.ok
    made = [r for r in emu.received if r.path.endswith("/cachedContents")]
    assert len(made) == 2  # the first had under a minute left at the third request
    names = [r.body["cachedContent"] for r in emu.received if "cachedContent" in r.body]
    assert names[0] == names[1] != names[2]


async def test_a_prompt_too_small_to_cache_goes_whole_without_asking() -> None:
    async with Emulator(calls(1), bill=True) as emu:
        model = make_model(f"gemini:gemini-2.5-flash@{emu.base_url}", env={})
        result = await Agent(model=model, tools=[ECHO], system="Be brief.",
                             cache=Cache(explicit=True)).arun("Go.")
        await model.aclose()
    assert result.ok
    assert all(r.path.endswith(":generateContent") for r in emu.received)
    assert all("systemInstruction" in r.body for r in emu.received)


async def test_a_cache_the_server_refuses_leaves_requests_whole_with_a_note() -> None:
    from toolwire.context import windows

    notes: list[str] = []
    windows.CACHE_MINIMUMS["gemini-2.5-flash-x"] = 10  # the client thinks it big enough
    try:
        async with Emulator(calls(2), bill=True) as emu:
            model = make_model(f"gemini:gemini-2.5-flash-x@{emu.base_url}", env={})
            windows.CACHE_MINIMUMS["gemini-2.5-flash-x"] = 100_000  # the server does not
            result = await Agent(model=model, tools=[ECHO], system=SYSTEM,
                                 cache=Cache(explicit=True), on_event=lambda e: notes.extend(
                                     e.notes if isinstance(e, WireNotes) else ())).arun("Go.")
            await model.aclose()
    finally:
        del windows.CACHE_MINIMUMS["gemini-2.5-flash-x"]
    assert result.ok
    made = [r for r in emu.received if r.path.endswith("/cachedContents")]
    assert len(made) == 1  # refused once, never asked again
    assert [n for n in notes if "no cache was made" in n and "too small" in n]
    assert all("systemInstruction" in r.body for r in emu.received if r not in made)


def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(urllib.request.Request(
                url, data=json.dumps(body).encode(), method="POST")) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_emulator_refuses_what_the_api_refuses() -> None:
    contents = [{"role": "user", "parts": [{"text": "hi"}]}]
    big = {"parts": [{"text": SYSTEM}]}
    with Emulator([{"text": "ok"}], clock=lambda: 0.0) as emu:
        base = emu.base_url
        status, made = post(f"{base}/v1beta/cachedContents",
                            {"model": "models/gemini-2.5-flash", "systemInstruction": big,
                             "ttl": "60s"})
        assert status == 200 and made["usageMetadata"]["totalTokenCount"] > 1024
        assert made["name"].startswith("cachedContents/") and made["expireTime"].endswith("Z")
        assert post(f"{base}/v1beta/cachedContents",
                    {"model": "models/gemini-2.5-flash", "contents": contents})[1]["error"][
            "message"].startswith("Cached content is too small.")
        assert post(f"{base}/v1beta/cachedContents", {"model": "models/gemini-2.5-flash",
                    "systemInstruction": big, "ttl": "soon"})[0] == 400
        url = f"{base}/v1beta/models/gemini-2.5-flash:generateContent"
        status, said = post(url, {"cachedContent": made["name"], "contents": contents,
                                  "systemInstruction": big})
        assert status == 400 and "can not be used with GenerateContent" in said["error"][
            "message"]
        status, said = post(f"{base}/v1beta/models/gemini-2.5-pro:generateContent",
                            {"cachedContent": made["name"], "contents": contents})
        assert status == 400 and "has to be the same" in said["error"]["message"]
        status, said = post(url, {"cachedContent": "cachedContents/nope", "contents": contents})
        assert status == 403 and said["error"]["status"] == "PERMISSION_DENIED"
        status, said = post(url, {"cachedContent": made["name"], "contents": contents})
        assert status == 200 and said["candidates"][0]["content"]["parts"][0]["text"] == "ok"
    # the request the script saw was the whole one: the cached instruction, then its contents
    assert emu.received[-1].body["cachedContent"] == made["name"]


def test_the_setting_survives_the_json_form() -> None:
    from toolwire.transcript_json import from_json, to_json

    request = Request(model="m", messages=(Message.user("hi"),),
                      cache=Cache(explicit=True, ttl="10m"))
    assert from_json(to_json(request)) == request


@pytest.mark.parametrize(("url", "collection", "resource"), [
    ("http://h/v1beta/models/gemini-2.5-flash:generateContent",
     "http://h/v1beta/cachedContents", "models/gemini-2.5-flash"),
    ("https://europe-west4-aiplatform.googleapis.com/v1/projects/p/locations/europe-west4/"
     "publishers/google/models/gemini-3-flash:streamGenerateContent?alt=sse",
     "https://europe-west4-aiplatform.googleapis.com/v1/projects/p/locations/europe-west4/"
     "cachedContents",
     "projects/p/locations/europe-west4/publishers/google/models/gemini-3-flash"),
])
def test_where_caches_are_made_for_each_host(url: str, collection: str, resource: str) -> None:
    assert collection_of(url, "cachedContents") == (collection, resource)
    assert [ttl_seconds(t) for t in ("5m", "1h", "90s", "10m", None, "soon")] == [
        300.0, 3600.0, 90.0, 600.0, None, None]
