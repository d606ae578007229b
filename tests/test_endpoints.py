"""Model ids pick the wire, the server and the key."""

from __future__ import annotations

import pytest

from toolwire import ConfigError
from toolwire.http.endpoints import MODEL_ID_FORMS, Endpoint, parse_model_id
from toolwire.http.providers import (
    ANTHROPIC_KEY,
    PROVIDERS,
    Provider,
    model_id_forms,
    register_provider,
    unregister_provider,
)

KEYS = {
    "ANTHROPIC_API_KEY": "sk-ant-test",
    "OPENAI_API_KEY": "sk-openai-test",
    "OPENROUTER_API_KEY": "sk-or-test",
    "GEMINI_API_KEY": "gem-test",
}


@pytest.mark.parametrize(
    ("model_id", "wire", "url"),
    [
        ("anthropic:claude-sonnet-4-5", "anthropic-messages", "https://api.anthropic.com/v1/messages"),
        ("openai:gpt-4.1", "openai-chat", "https://api.openai.com/v1/chat/completions"),
        ("openai-responses:gpt-5", "openai-responses", "https://api.openai.com/v1/responses"),
        ("openrouter:anthropic/claude-haiku-5.5", "openai-chat",
         "https://openrouter.ai/api/v1/chat/completions"),
        ("ollama:qwen3", "ollama-chat", "http://127.0.0.1:11434/api/chat"),
        ("gemini:gemini-3-flash", "gemini-generate",
         "https://generativelanguage.googleapis.com/v1beta/models/gemini-3-flash:generateContent"),
        ("openai-compatible:smollm2@http://127.0.0.1:8080", "openai-chat",
         "http://127.0.0.1:8080/v1/chat/completions"),
        ("anthropic:smollm2@http://127.0.0.1:8080", "anthropic-messages",
         "http://127.0.0.1:8080/v1/messages"),
        ("openai-compatible:m@http://127.0.0.1:8000/v1", "openai-chat",
         "http://127.0.0.1:8000/v1/chat/completions"),
    ],
)
def test_model_ids(model_id: str, wire: str, url: str) -> None:
    ep = parse_model_id(model_id, KEYS)
    assert ep.wire == wire
    assert ep.url() == url


def test_gemini_stream_url() -> None:
    ep = parse_model_id("gemini:gemini-3-flash@http://127.0.0.1:9", {})
    assert ep.url(stream=True) == (
        "http://127.0.0.1:9/v1beta/models/gemini-3-flash:streamGenerateContent?alt=sse"
    )


def test_auth_headers_per_wire() -> None:
    assert parse_model_id("anthropic:m", KEYS).headers()["x-api-key"] == "sk-ant-test"
    assert parse_model_id("anthropic:m", KEYS).headers()["anthropic-version"] == "2023-06-01"
    assert parse_model_id("openai:m", KEYS).headers()["authorization"] == "Bearer sk-openai-test"
    assert parse_model_id("openrouter:a/b", KEYS).headers()["authorization"] == "Bearer sk-or-test"
    assert parse_model_id("gemini:m", KEYS).headers()["x-goog-api-key"] == "gem-test"
    assert "authorization" not in parse_model_id("ollama:m", KEYS).headers()


def test_google_api_key_is_accepted_for_gemini() -> None:
    ep = parse_model_id("gemini:m", {"GOOGLE_API_KEY": "g"})
    assert ep.key == "g" and ep.key_var == "GOOGLE_API_KEY"


@pytest.mark.parametrize(
    ("model_id", "var"),
    [("anthropic:m", "ANTHROPIC_API_KEY"), ("openai:m", "OPENAI_API_KEY"),
     ("openai-responses:m", "OPENAI_API_KEY"), ("openrouter:a/b", "OPENROUTER_API_KEY"),
     ("gemini:m", "GEMINI_API_KEY or GOOGLE_API_KEY")],
)
def test_missing_key_names_the_variable(model_id: str, var: str) -> None:
    with pytest.raises(ConfigError, match=f"set {var} in the environment"):
        parse_model_id(model_id, {})


def test_base_url_needs_no_key() -> None:
    ep = parse_model_id("anthropic:m@http://127.0.0.1:1", {})
    assert ep.key is None and "x-api-key" not in ep.headers()


def test_ollama_host() -> None:
    assert parse_model_id("ollama:m", {"OLLAMA_HOST": "10.0.0.5:11434"}).url() == (
        "http://10.0.0.5:11434/api/chat"
    )


@pytest.mark.parametrize(
    ("model_id", "match"),
    [
        ("claude", "unknown model id 'claude'. Use one of: anthropic:<model>"),
        ("mistral:large", "unknown model id 'mistral:large'"),
        ("anthropic:", "names no model"),
        ("openai-compatible:m", "needs a server: write openai-compatible:<model>@<base_url>"),
        ("openai:m@localhost:8080", "is not a base URL"),
    ],
)
def test_bad_ids_explain_the_forms(model_id: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        parse_model_id(model_id, KEYS)


def test_the_forms_in_messages_are_the_provider_registry_s() -> None:
    assert model_id_forms() == MODEL_ID_FORMS
    assert MODEL_ID_FORMS[:2] == ("anthropic:<model>", "openai:<model>")
    assert [f.split(":")[0] for f in MODEL_ID_FORMS[:-1]] == list(PROVIDERS)


def test_an_endpoint_made_by_hand_authenticates_as_its_provider() -> None:
    parsed = parse_model_id("gemini:m", KEYS)
    by_hand = Endpoint(provider="gemini", wire=parsed.wire, model="m", base_url="http://h",
                       key="gem-test")
    assert by_hand.headers() == parsed.headers()
    assert by_hand.headers()["x-goog-api-key"] == "gem-test"
    unknown = Endpoint(provider="mine", wire=parsed.wire, model="m", base_url="http://h", key="k")
    assert unknown.headers()["authorization"] == "Bearer k"


def test_a_registered_provider_gets_the_built_in_ones_behaviour() -> None:
    spec = PROVIDERS["openai-compatible"]
    register_provider(Provider(name="gateway", wire=spec.wire, base_url="", needs_base_url=True,
                               host_var="GATEWAY_HOST", auth=ANTHROPIC_KEY))
    try:
        with pytest.raises(ConfigError, match="needs a server: write gateway:<model>@<base_url>"):
            parse_model_id("gateway:m", {})
        ep = parse_model_id("gateway:m@http://127.0.0.1:5/v1", {})
        assert ep.url() == "http://127.0.0.1:5/v1/chat/completions"
        assert ep.headers()["anthropic-version"] == "2023-06-01" and "x-api-key" not in ep.headers()
        assert ep.prepare_body({"a": 1}) == {"a": 1}
        with pytest.raises(ConfigError, match=r"Use one of: .*gateway:<model>"):
            parse_model_id("nope:m", {})
    finally:
        unregister_provider("gateway")
    with pytest.raises(ConfigError, match="unknown model id 'gateway:m'"):
        parse_model_id("gateway:m", {})


def test_a_model_id_keeps_no_credentials_of_its_base_url_where_it_is_written_down() -> None:
    import toolwire
    from toolwire.http.endpoints import without_credentials

    given = "openai-compatible:m@http://alice:s3cret@127.0.0.1:8080/v1"
    assert without_credentials(given) == "openai-compatible:m@http://127.0.0.1:8080/v1"
    assert without_credentials("openai:gpt-x") == "openai:gpt-x"
    assert without_credentials("openai-compatible:m@http://h:1/v1") == "openai-compatible:m@http://h:1/v1"
    model = toolwire.model(given)
    try:
        assert "s3cret" not in model.name and model.name.endswith("@http://127.0.0.1:8080/v1")
    finally:
        model.close()
