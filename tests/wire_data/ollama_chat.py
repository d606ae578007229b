"""Test data of the ollama-chat wire (see tests/wire_data/__init__.py)."""

from typing import Any

from wire_data import SECRET, THOUGHT

MODEL_ID = "ollama:llama3.2"
HISTORY_KEY = "messages"
CACHES_PROMPTS = False
IMAGE_TOKENS = 576
REASONING = THOUGHT
REPLY_CALL_IDS = True
MEDIA_MODEL = 'm'
MEDIA_MOVED = False  # a tool's image leaves its result, with a media_moved note
STREAM_QUERY = ""
USAGE_TEXT = b'"prompt_eval_count": 10'
KEEPS_UNKNOWN_FIELDS = False
ERROR_AS_REPLY: list[Any] = [{"error": "slow down"}]
ERROR_NAMES_KIND = False  # its error body names no kind


def result_image(body: dict[str, Any]) -> Any:
    """Where the second request's body carries the image a tool returned."""
    return body["messages"][2]["images"][0]


SDK_BODY: dict[str, Any] = {
    "model": "llama3.2", "stream": False,
    "tools": [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
        {"role": "tool", "tool_name": "get_weather", "content": "sunny"}],
}
LOOKUPS_REASONING: Any = "Two lookups at once."
SETTINGS: tuple[dict[str, Any], set[str]] = (
    {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": False,
     "options": {"num_ctx": 8192}, "keep_alive": "5m"}, {"options", "keep_alive"})
ALWAYS_SENT: set[str] = set()
MEDIA_CARRIED = {"image"}
MEDIA_NAMES = True
MEDIA_NOTES: list[str] = ["media_dropped"]  # no documents: a placeholder text
CACHE_MARKERS_TAKEN = False
SDK_ANY_OF = False  # the ollama package's Property type has no anyOf (its server takes one)
TEXT_ARGUMENTS = False
SECRET_REASONING: Any = "Look it up first. " + SECRET


def tool_names(body: dict[str, Any]) -> dict[str, list[str]]:
    """Where tool names appear in a request body: tools, choice, calls, results."""
    return {"tools": [t["function"]["name"] for t in body["tools"]],
            "choice": [],  # no tool choice on this wire
            "calls": [c["function"]["name"] for m in body["messages"]
                      for c in m.get("tool_calls") or ()],
            "results": [m["tool_name"] for m in body["messages"] if m["role"] == "tool"]}


_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
PROXY_BODY: dict[str, Any] | None = {
    "stream": False, "messages": [{"content": "hi", "role": "user"}], "model": "m",
    "tools": [{"function": {"parameters": _SCHEMA, "name": "get_weather"}, "type": "function"}]}
PROXY_ENV: dict[str, str] = {}
