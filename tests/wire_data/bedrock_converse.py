"""Test data of the bedrock-converse wire (see tests/wire_data/__init__.py)."""

from typing import Any

from wire_data import SECRET, THOUGHT

MODEL_ID = "bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0"
HISTORY_KEY = "messages"
CACHES_PROMPTS = False
IMAGE_TOKENS = 1334  # by its area, as Anthropic
REASONING = {"reasoningText": {"text": THOUGHT, "signature": "c2ln"}}
REPLY_CALL_IDS = True
MEDIA_MODEL = 'm'
MEDIA_MOVED = False  # a tool's image leaves its result, with a media_moved note
STREAM_QUERY = ""
USAGE_TEXT = b'"inputTokens": 10'
KEEPS_UNKNOWN_FIELDS = False
ERROR_AS_REPLY: list[Any] = [
    {"message": "Too many requests, slow down"}, {"Message": "Rate exceeded: slow down"}]
ERROR_NAMES_KIND = True


def result_image(body: dict[str, Any]) -> Any:
    """Where the second request's body carries the image a tool returned."""
    return body["messages"][2]["content"][0]["toolResult"]["content"][1]["image"]["source"][
        "bytes"]


SDK_BODY: dict[str, Any] = {
    "modelId": "m", "system": [{"text": "Be brief."}],
    "toolConfig": {"tools": [{"toolSpec": {
        "name": "get_weather", "description": "Weather.",
        "inputSchema": {"json": {"type": "object",
                                 "properties": {"city": {"type": "string"}}}}}}]},
    "messages": [
        {"role": "user", "content": [{"text": "Weather in Paris?"}]},
        {"role": "assistant", "content": [{"toolUse": {
            "toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}}]},
        {"role": "user", "content": [{"toolResult": {
            "toolUseId": "tooluse_1", "content": [{"text": "sunny"}], "status": "success"}}]}],
}
LOOKUPS_REASONING: Any = {"reasoningText": {"text": "Two lookups at once.",
                                                "signature": "EqQBCkYIARgCIkB"}}
SETTINGS: tuple[dict[str, Any], set[str]] = (
    {"messages": [{"role": "user", "content": [{"text": "hi"}]}],
     "additionalModelRequestFields": {"top_k": 5}}, {"additionalModelRequestFields"})
ALWAYS_SENT: set[str] = set()
MEDIA_CARRIED = {"image", "document"}
MEDIA_NAMES = True
MEDIA_NOTES: list[str] = []
CACHE_MARKERS_TAKEN = True  # as a cache point after the same block
SDK_ANY_OF = True
TEXT_ARGUMENTS = False
SECRET_REASONING: Any = {"reasoningText": {"text": "Look it up first.", "signature": SECRET}}


def tool_names(body: dict[str, Any]) -> dict[str, list[str]]:
    """Where tool names appear in a request body: tools, choice, calls, results."""
    blocks = [b for m in body["messages"] for b in m["content"]]
    return {"tools": [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"]],
            "choice": [body["toolConfig"]["toolChoice"]["tool"]["name"]],
            "calls": [b["toolUse"]["name"] for b in blocks if "toolUse" in b],
            "results": []}


_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
PROXY_BODY: dict[str, Any] | None = {
    "messages": [{"content": [{"text": "hi"}], "role": "user"}],
    "toolConfig": {"tools": [{"toolSpec": {"inputSchema": {"json": _SCHEMA},
                                           "name": "get_weather"}}]}}
PROXY_ENV: dict[str, str] = {"AWS_BEARER_TOKEN_BEDROCK": "upstream-token",
                             "AWS_REGION": "us-east-1"}
