"""Test data of the gemini-generate wire (see tests/wire_data/__init__.py)."""

from typing import Any

from wire_data import SECRET, THOUGHT

MODEL_ID = "gemini:gemini-2.5-flash"
HISTORY_KEY = "contents"
CACHES_PROMPTS = True
IMAGE_TOKENS = 258 * 4  # by 768-pixel tiles
REASONING = {"text": THOUGHT, "thought": True, "thoughtSignature": "c2ln"}
REPLY_CALL_IDS = False  # its replies may carry no call ids at all
MEDIA_MODEL = 'gemini-2.5-flash'
MEDIA_MOVED = True  # a tool's image leaves its result, with a media_moved note
STREAM_QUERY = "?alt=sse"  # its SDK asks for server-sent events
USAGE_TEXT = b'"promptTokenCount": 10'
KEEPS_UNKNOWN_FIELDS = False
ERROR_AS_REPLY: list[Any] = [
    {"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}}]
ERROR_NAMES_KIND = True


def result_image(body: dict[str, Any]) -> Any:
    """Where the second request's body carries the image a tool returned."""
    parts = body["contents"][2]["parts"]
    inner = parts[0]["functionResponse"].get("parts")
    if inner:  # a model that takes media inside the function response
        return inner[0]["inlineData"]["data"]
    assert parts[1]["text"].startswith("[media returned by tool call ")
    return parts[2]["inlineData"]["data"]


SDK_BODY: dict[str, Any] = {
    "model": "gemini-2.5-flash", "systemInstruction": {"parts": [{"text": "Be brief."}]},
    "tools": [{"functionDeclarations": [{
        "name": "get_weather", "description": "Weather.",
        "parametersJsonSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]}],
    "contents": [
        {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "get_weather",
                                                      "args": {"city": "Paris"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get_weather",
                                                         "response": {"output": "sunny"}}}]}],
}
LOOKUPS_REASONING: Any = {"text": "Two lookups at once.", "thought": True,
                              "thoughtSignature": "CiQB0e2Kb"}
SETTINGS: tuple[dict[str, Any], set[str]] = (
    {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "safetySettings": []},
    {"safetySettings"})
ALWAYS_SENT: set[str] = set()
MEDIA_CARRIED = {"image", "document", "audio"}
MEDIA_NAMES = False
MEDIA_NOTES: list[str] = ["field_dropped", "media_moved"]  # no names; no result parts on 2.5
CACHE_MARKERS_TAKEN = False
SDK_ANY_OF = True
TEXT_ARGUMENTS = False
SECRET_REASONING: Any = {"text": "Look it up first.", "thought": True, "thoughtSignature": SECRET}


def tool_names(body: dict[str, Any]) -> dict[str, list[str]]:
    """Where tool names appear in a request body: tools, choice, calls, results."""
    parts = [p for c in body["contents"] for p in c["parts"]]
    return {"tools": [d["name"] for d in body["tools"][0]["functionDeclarations"]],
            "choice": body["toolConfig"]["functionCallingConfig"]["allowedFunctionNames"],
            "calls": [p["functionCall"]["name"] for p in parts if "functionCall" in p],
            "results": [p["functionResponse"]["name"] for p in parts
                        if "functionResponse" in p]}


_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
PROXY_BODY: dict[str, Any] | None = {
    "contents": [{"parts": [{"text": "hi"}], "role": "user"}],
    "tools": [{"functionDeclarations": [{"parameters": _SCHEMA, "name": "get_weather"}]}]}
PROXY_ENV: dict[str, str] = {}
