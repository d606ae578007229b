"""The cloud model ids against the emulator: Amazon Bedrock, Google Vertex AI, Azure OpenAI.

Each id resolves its host, paths and authentication from the environment or the id, naming
what is missing before any request; a full run on each id over loopback HTTP, whole and
streamed, recovers from throttling; the emulator checks the SigV4 signature of every Bedrock
attempt; and the official clients (the anthropic SDK's Bedrock and Vertex clients, openai's
Azure client) get what they expect from the emulator.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest

from toolwire import Agent, Message, RunStop, TextPart, ToolCallPart, Usage, check_transcript
from toolwire.codecs import get_codec
from toolwire.emulator import Emulator, Fault
from toolwire.errors import (
    AuthenticationError,
    ConfigError,
    ContextLengthError,
    InvalidRequestError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
)
from toolwire.events import RetryEvent
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.http.cloud import InvokeChunks, to_bedrock_invoke, to_vertex_anthropic
from toolwire.http.endpoints import parse_model_id
from toolwire.http.sigv4 import AwsCredentials
from toolwire.schema.tool import Tool
from toolwire.transcript import Reply, Request, ToolResultPart

AWS = {"AWS_ACCESS_KEY_ID": "AKIDTOOLWIRE", "AWS_SECRET_ACCESS_KEY": "secret/key+1",
       "AWS_SESSION_TOKEN": "session-token", "AWS_REGION": "eu-west-3"}
CREDS = AwsCredentials("AKIDTOOLWIRE", "secret/key+1", "session-token")
GOOGLE = {"GOOGLE_CLOUD_PROJECT": "proj-1", "GOOGLE_CLOUD_LOCATION": "europe-west4",
          "GOOGLE_CLOUD_ACCESS_TOKEN": "ya29.token"}
AZURE = {"AZURE_OPENAI_API_KEY": "azure-key"}

# --------------------------------------------------------------------------- model ids


def test_bedrock_ids_resolve_their_region_and_paths() -> None:
    converse = parse_model_id("bedrock:anthropic.claude-sonnet-4-5-v1:0", AWS)
    assert converse.wire == "bedrock-converse"
    assert converse.url() == ("https://bedrock-runtime.eu-west-3.amazonaws.com/model/"
                              "anthropic.claude-sonnet-4-5-v1%3A0/converse")
    assert converse.url(stream=True).endswith("/converse-stream")
    assert converse.signer is not None and "authorization" not in converse.headers()
    arn = "arn:aws:bedrock:us-west-2:123456789012:inference-profile/us.anthropic.claude"
    by_arn = parse_model_id(f"bedrock:{arn}", {k: v for k, v in AWS.items()
                                               if k != "AWS_REGION"})
    assert by_arn.url().startswith("https://bedrock-runtime.us-west-2.amazonaws.com/model/arn%3A")
    invoke = parse_model_id("bedrock-anthropic:anthropic.claude-haiku", AWS)
    assert invoke.wire == "anthropic-messages" and invoke.url().endswith("/invoke")
    assert invoke.url(stream=True).endswith("/invoke-with-response-stream")
    assert invoke.prepare_body({"model": "x", "stream": True, "max_tokens": 5}) == {
        "max_tokens": 5, "anthropic_version": "bedrock-2023-05-31"}
    keyed = parse_model_id("bedrock:m", {"AWS_REGION": "us-east-1",
                                         "AWS_BEARER_TOKEN_BEDROCK": "bedrock-api-key"})
    assert keyed.signer is None
    assert keyed.headers()["authorization"] == "Bearer bedrock-api-key"


def test_vertex_and_azure_ids_resolve_their_hosts() -> None:
    gemini = parse_model_id("vertex:gemini-3-flash", GOOGLE)
    assert gemini.url() == ("https://europe-west4-aiplatform.googleapis.com/v1/projects/proj-1/"
                            "locations/europe-west4/publishers/google/models/gemini-3-flash"
                            ":generateContent")
    assert gemini.url(stream=True).endswith(":streamGenerateContent?alt=sse")
    claude = parse_model_id("vertex-anthropic:claude-sonnet-5",
                            {**GOOGLE, "GOOGLE_CLOUD_LOCATION": "global"})
    assert claude.url() == ("https://aiplatform.googleapis.com/v1/projects/proj-1/locations/"
                            "global/publishers/anthropic/models/claude-sonnet-5:rawPredict")
    assert claude.url(stream=True).endswith(":streamRawPredict")
    interactions = parse_model_id("vertex-interactions:gemini-3-flash", GOOGLE)
    assert interactions.url() == interactions.url(stream=True) == (
        "https://europe-west4-aiplatform.googleapis.com/v1beta1/projects/proj-1/locations/"
        "europe-west4/interactions")
    assert to_vertex_anthropic({"model": "x", "stream": True}) == {
        "stream": True, "anthropic_version": "vertex-2023-10-16"}
    chat = parse_model_id("azure:my-gpt", {**AZURE,
                                           "AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com/"})
    assert chat.url() == "https://res.openai.azure.com/openai/v1/chat/completions"
    assert chat.headers()["api-key"] == "azure-key"
    responses = parse_model_id("azure-responses:my-gpt@https://res.openai.azure.com/openai/v1",
                               {"AZURE_OPENAI_AD_TOKEN": "entra"})
    assert responses.url() == "https://res.openai.azure.com/openai/v1/responses"
    assert responses.headers()["authorization"] == "Bearer entra"


@pytest.mark.parametrize(("model_id", "env", "named"), [
    ("bedrock:m", {"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"}, "AWS_REGION"),
    ("bedrock-anthropic:m", {"AWS_REGION": "us-east-1",
                             "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"},
     "AWS_ACCESS_KEY_ID"),
    ("vertex:gemini", {"GOOGLE_CLOUD_LOCATION": "us"}, "GOOGLE_CLOUD_PROJECT"),
    ("vertex-anthropic:claude", {}, "GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION"),
    ("azure:dep", AZURE, "AZURE_OPENAI_ENDPOINT"),
    ("azure-responses:dep", {"AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com"},
     "AZURE_OPENAI_API_KEY"),
])
def test_a_missing_setting_is_named_before_any_request(model_id: str, env: dict[str, str],
                                                       named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        make_model(model_id, env=env)


def test_vertex_without_google_auth_says_which_extra_to_install(monkeypatch: Any) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "google.auth", None)  # as if google-auth were missing
    with pytest.raises(ConfigError, match=r"pip install 'toolwire\[vertex\]'"):
        make_model("vertex:gemini-3-flash", env={k: v for k, v in GOOGLE.items()
                                                 if k != "GOOGLE_CLOUD_ACCESS_TOKEN"})


def test_bedrocks_invoke_stream_becomes_anthropic_events() -> None:
    sse = get_codec("anthropic-messages").encode_stream(Reply(message=Message.assistant("hi")))
    from toolwire.emulator.cloud import reframe

    framed = b"".join(reframe(sse))
    adapter = InvokeChunks()
    text = b"".join(adapter.feed(framed[i:i + 7]) for i in range(0, len(framed), 7))
    adapter.close()
    events = list(get_codec("anthropic-messages").decode_stream([text]))
    assert events[-1].reply.text == "hi"  # type: ignore[union-attr]
    assert to_bedrock_invoke({"model": "m", "anthropic_version": "x"}) == {
        "anthropic_version": "x"}


# --------------------------------------------------------------------------- full runs

CALL = Reply(message=Message(role="assistant", parts=(
    TextPart(text="Checking."),
    ToolCallPart(id="call_p1", name="get_weather", arguments={"city": "Paris"}))),
    stop="tool_calls", usage=Usage(input_tokens=40, output_tokens=9))
ANSWER = Reply(message=Message.assistant("18°C in Paris."),
               usage=Usage(input_tokens=70, output_tokens=6))
TOOL = Tool(name="get_weather", description="Weather for a city.",
            input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]}, fn=lambda city: f"18°C in {city}")
IDS = {
    "bedrock": ("bedrock:anthropic.claude-sonnet-5", AWS, "bedrock-converse"),
    "bedrock-anthropic": ("bedrock-anthropic:anthropic.claude-sonnet-5", AWS,
                          "anthropic-messages"),
    "vertex": ("vertex:gemini-3-flash", GOOGLE, "gemini-generate"),
    "vertex-anthropic": ("vertex-anthropic:claude-sonnet-5", GOOGLE, "anthropic-messages"),
    "vertex-interactions": ("vertex-interactions:gemini-3-flash", GOOGLE, "gemini-interactions"),
    "azure": ("azure:my-deployment", AZURE, "openai-chat"),
    "azure-responses": ("azure-responses:my-deployment", AZURE, "openai-responses"),
}


async def weather_run(provider: str, script: list[Any], *, stream: bool
                      ) -> tuple[Emulator, Any, list[Any]]:
    """A weather run on ``provider``'s id against an emulator playing ``script`` (every item
    used), with quick retries: the emulator, the run's result and its events."""
    model_id, env, _ = IDS[provider]
    events: list[Any] = []
    async with Emulator(script, aws_credentials=CREDS) as emu:
        model = make_model(f"{model_id}@{emu.base_url}", env=env,
                           retry=RetryPolicy(base=0.001, max_wait=0.01), seed=1)
        agent = Agent(model=model, tools=[TOOL], stream=stream, on_event=events.append)
        result = await agent.arun("Weather in Paris?")
        await model.aclose()
        emu.assert_done()
    return emu, result, events


@pytest.mark.parametrize("provider", list(IDS))
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_full_run_on_each_cloud_id_recovers_from_throttling(provider: str,
                                                                    stream: bool) -> None:
    wire = IDS[provider][2]
    script = [Fault(kind="rate_limit", retry_after=0.01), CALL, ANSWER]
    emu, result, events = await weather_run(provider, script, stream=stream)
    assert result.stop is RunStop.ANSWERED and result.answer == "18°C in Paris."
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    assert check_transcript(result.messages, wire) == []
    retries = [e for e in events if isinstance(e, RetryEvent)]
    assert len(retries) == 1 and isinstance(retries[0].error, RateLimitError)
    assert [r.wire for r in emu.received] == [wire] * 3
    first = emu.received[0]
    if provider.startswith("bedrock"):  # three attempts, each signed anew, all accepted
        dates = [r.headers["x-amz-date"] for r in emu.received]
        assert all(r.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential="
                                                         "AKIDTOOLWIRE/") for r in emu.received)
        assert len(dates) == 3 and "model" not in first.body
    elif provider.startswith("vertex"):
        assert first.headers["authorization"] == "Bearer ya29.token"
        assert "/projects/proj-1/locations/europe-west4/" in first.path
    else:
        assert first.headers["api-key"] == "azure-key"
        assert first.path.startswith("/openai/v1/")


MID_STREAM = [("throttlingException", RateLimitError), ("modelStreamErrorException", None),
              ("internalServerException", ServerError),
              ("serviceUnavailableException", OverloadedError)]


@pytest.mark.parametrize("provider", ["bedrock", "bedrock-anthropic"])
@pytest.mark.parametrize(("exception", "kind"), MID_STREAM, ids=[e for e, _ in MID_STREAM])
async def test_an_exception_inside_the_event_stream_is_retried(provider: str, exception: str,
                                                               kind: type | None) -> None:
    wire = IDS[provider][2]
    script = [Fault(kind="error_mid_stream", exception=exception, reply=CALL), CALL, ANSWER]
    _, result, events = await weather_run(provider, script, stream=True)
    assert result.stop is RunStop.ANSWERED and result.answer == "18°C in Paris."
    assert check_transcript(result.messages, wire) == []
    retries = [e for e in events if isinstance(e, RetryEvent)]
    assert len(retries) == 1 and retries[0].error.retryable
    if kind is not None:
        assert isinstance(retries[0].error, kind)
    if provider == "bedrock":  # the exception's own type, kept as Bedrock names it
        assert retries[0].error.error_type == exception[0].upper() + exception[1:]
    # what the client read of the first attempt before the exception is dropped: one call only
    assert [type(p).__name__ for p in result.messages[1].parts] == ["TextPart", "ToolCallPart"]


async def test_a_validation_exception_inside_the_stream_ends_the_run() -> None:
    script = [Fault(kind="error_mid_stream", exception="validationException",
                    message="Malformed input request, please reformat your input.")]
    async with Emulator(script, aws_credentials=CREDS) as emu:
        model = make_model(f"bedrock:m@{emu.base_url}", env=AWS,
                           retry=RetryPolicy(base=0.001, max_wait=0.01))
        result = await Agent(model=model, stream=True).arun("hi")
        await model.aclose()
    assert result.stop is RunStop.PROVIDER_ERROR and len(emu.received) == 1
    assert isinstance(result.error, InvalidRequestError)
    assert "Malformed input request" in str(result.error)


def test_the_mid_stream_exception_is_refused_where_streams_are_not_event_streams() -> None:
    import urllib.error
    import urllib.request

    body = json.dumps({"model": "m", "max_tokens": 5, "stream": True,
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    with Emulator([Fault(kind="error_mid_stream")]) as emu, pytest.raises(
            urllib.error.HTTPError) as caught:
        urllib.request.urlopen(urllib.request.Request(
            f"{emu.base_url}/v1/messages", data=body, method="POST"))
    assert caught.value.code == 500 and b"AWS event streams" in caught.value.read()


BEDROCK_ERRORS = [(Fault(kind="rate_limit", retry_after=0), 429, "ThrottlingException",
                   RateLimitError),
                  (Fault(kind="overloaded"), 503, "ServiceUnavailableException",
                   OverloadedError),
                  (Fault(kind="bad_request", message="Input is too long for requested model."),
                   400, "ValidationException", ContextLengthError),
                  (Fault(kind="auth"), 401, "UnrecognizedClientException",
                   AuthenticationError)]


@pytest.mark.parametrize(("fault", "status", "kind", "error"), BEDROCK_ERRORS,
                         ids=[k for _, _, k, _ in BEDROCK_ERRORS])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_invoke_model_answers_and_is_read_with_bedrocks_errors(
        fault: Fault, status: int, kind: str, error: type, stream: bool) -> None:
    import urllib.error
    import urllib.request

    with Emulator([fault, fault]) as emu:
        with pytest.raises(urllib.error.HTTPError) as caught:  # what the server sends
            urllib.request.urlopen(urllib.request.Request(
                f"{emu.base_url}/model/anthropic.claude-sonnet-5/invoke", method="POST",
                data=json.dumps({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 9,
                                 "messages": [{"role": "user", "content": "hi"}]}).encode()))
        sent = json.loads(caught.value.read())
        assert caught.value.code == status and caught.value.headers["x-amzn-errortype"] == kind
        assert set(sent) <= {"message", "__type"} and sent["message"]
        model = make_model(f"bedrock-anthropic:anthropic.claude-sonnet-5@{emu.base_url}",
                           env=AWS, retry=RetryPolicy(max_attempts=1))
        request = Request(model="m", messages=(Message.user("hi"),))
        with pytest.raises(error) as read:
            if stream:
                async for _ in model.stream(request):
                    pass
            else:
                await model.complete(request)
        await model.aclose()
    assert read.value.error_type == kind and read.value.status == status
    assert read.value.wire == "anthropic-messages"


def test_bedrocks_retry_asking_types_are_retried_on_invoke_model_too() -> None:
    codec = get_codec("anthropic-messages")
    for kind, status in (("ModelStreamErrorException", 424), ("ModelNotReadyException", 429),
                         ("ModelErrorException", 424)):
        error = codec.decode_error(status, {"message": "m"},
                                   {"X-Amzn-ErrorType": f"{kind}:http://internal.amazon.com/"})
        assert error.error_type == kind
        assert error.retryable is (kind != "ModelErrorException")
    said = codec.decode_error(429, {"type": "error", "error": {"type": "rate_limit_error",
                                                               "message": "slow"}},
                              {"x-amzn-errortype": "ThrottlingException"})
    assert said.error_type == "rate_limit_error"  # the body's own type comes first


def test_the_emulator_throttles_and_refuses_as_bedrock_does() -> None:
    import urllib.error
    import urllib.request

    body = json.dumps({"messages": [{"role": "user", "content": [{"text": "hi"}]}]}).encode()
    with Emulator([Fault(kind="rate_limit", retry_after=1)]) as emu:
        url = f"{emu.base_url}/model/m/converse"
        for sent, status, kind in ((body, 429, "ThrottlingException"),
                                   (b'{"messages": []}', 400, "ValidationException")):
            with pytest.raises(urllib.error.HTTPError) as caught:
                urllib.request.urlopen(urllib.request.Request(url, data=sent, method="POST"))
            error = caught.value
            assert error.code == status and error.headers["x-amzn-errortype"] == kind
            decoded = get_codec("bedrock-converse").decode_error(
                status, error.read(), dict(error.headers))
            assert decoded.error_type == kind


async def test_a_request_signed_with_the_wrong_secret_is_refused() -> None:
    async with Emulator([ANSWER], aws_credentials=CREDS) as emu:
        model = make_model(f"bedrock:m@{emu.base_url}",
                           env={**AWS, "AWS_SECRET_ACCESS_KEY": "wrong"},
                           retry=RetryPolicy(max_attempts=1))
        with pytest.raises(PermissionDeniedError, match="signature we calculated"):
            await model.complete(Request(model="m", messages=(Message.user("hi"),)))
        await model.aclose()


COUNTED_AT = {
    "bedrock": ("/model/anthropic.claude-sonnet-5/count-tokens", "inputTokens"),
    "bedrock-anthropic": ("/model/anthropic.claude-sonnet-5/count-tokens", "inputTokens"),
    "vertex": ("/v1/projects/proj-1/locations/europe-west4/publishers/google/models/"
               "gemini-3-flash:countTokens", "totalTokens"),
    "vertex-anthropic": ("/v1/projects/proj-1/locations/europe-west4/publishers/anthropic/"
                         "models/count-tokens:rawPredict", "input_tokens"),
}


@pytest.mark.parametrize("provider", list(IDS))
async def test_count_tokens_on_each_cloud_host(provider: str) -> None:
    from toolwire.context.estimate import estimate_tokens

    model_id, env, _ = IDS[provider]
    request = Request(model="x", system="Answer in French. " * 40, tools=(TOOL.spec,),
                      messages=(Message.user("Weather in Paris?"), CALL.message,
                                Message(role="tool", parts=(ToolResultPart(
                                    call_id="call_p1", content="18°C",
                                    name="get_weather"),))))
    async with Emulator([], aws_credentials=CREDS) as emu:
        model = make_model(f"{model_id}@{emu.base_url}", env=env)
        counted = await model.count_tokens(request)
        await model.aclose()
    estimate = estimate_tokens(request)
    if provider.startswith("azure") or provider == "vertex-interactions":
        # no counting endpoint (Azure, Interactions): the local estimate
        assert emu.received == [] and counted == estimate
        return
    path, _ = COUNTED_AT[provider]
    [sent] = emu.received
    assert sent.path == path and 0.5 * estimate < counted < 2 * estimate
    body = sent.body
    if provider == "bedrock":  # signed, and accepted: the emulator checks the signature
        assert sent.headers["authorization"].startswith("AWS4-HMAC-SHA256")
        assert set(body["input"]["converse"]) == {"messages", "system", "toolConfig"}
    elif provider == "bedrock-anthropic":  # the InvokeModel body, as base64 bytes
        import base64

        invoked = json.loads(base64.b64decode(body["input"]["invokeModel"]["body"]))
        assert invoked["anthropic_version"] == "bedrock-2023-05-31" and invoked["tools"]
    elif provider == "vertex":
        assert set(body) == {"contents", "systemInstruction", "tools"}
        assert sent.headers["authorization"] == "Bearer ya29.token"
    else:
        assert body["model"] == "claude-sonnet-5" and body["messages"] and body["tools"]


def test_the_count_endpoints_bodies_validate_against_botocore() -> None:
    """Bedrock's CountTokens body, as toolwire writes it for a Converse request, satisfies
    botocore's service model (its required members and types)."""
    import botocore.session
    from botocore.validate import ParamValidator

    from toolwire.http.cloud import converse_count

    body = get_codec("bedrock-converse").encode_request(Request(
        model="m", system="Be brief.", tools=(TOOL.spec,), messages=(Message.user("hi"),)))
    shape = botocore.session.get_session().get_service_model(
        "bedrock-runtime").operation_model("CountTokens").input_shape
    report = ParamValidator().validate({"modelId": "m", **converse_count(body, "m")}, shape)
    assert not report.has_errors(), report.generate_report()


# --------------------------------------------------------------------------- official clients


def test_anthropic_bedrock_client_agrees_with_the_emulator() -> None:
    with Emulator([CALL, ANSWER], aws_credentials=CREDS) as emu:
        client = anthropic.AnthropicBedrock(
            aws_access_key=CREDS.access_key, aws_secret_key=CREDS.secret_key,
            aws_session_token=CREDS.token, aws_region="eu-west-3", base_url=emu.base_url,
            max_retries=0)
        message = client.messages.create(model="anthropic.claude-sonnet-5", max_tokens=100,
                                         messages=[{"role": "user", "content": "Weather?"}],
                                         tools=[{"name": "get_weather", "input_schema": dict(
                                             TOOL.input_schema)}])
        assert message.stop_reason == "tool_use"
        assert message.content[1].input == {"city": "Paris"}
        with client.messages.stream(model="anthropic.claude-sonnet-5", max_tokens=100,
                                    messages=[{"role": "user", "content": "Weather?"}]) as s:
            assert s.get_final_text() == "18°C in Paris."
        assert [r.path for r in emu.received] == [
            "/model/anthropic.claude-sonnet-5/invoke",
            "/model/anthropic.claude-sonnet-5/invoke-with-response-stream"]
        assert "anthropic_version" in emu.received[0].body and "model" not in emu.received[0].body


def test_anthropic_vertex_client_agrees_with_the_emulator() -> None:
    with Emulator([ANSWER, ANSWER]) as emu:
        client = anthropic.AnthropicVertex(project_id="proj-1", region="us-east5",
                                           access_token="ya29.token",
                                           base_url=f"{emu.base_url}/v1", max_retries=0)
        message = client.messages.create(model="claude-sonnet-5", max_tokens=50,
                                         messages=[{"role": "user", "content": "hi"}])
        assert message.content[0].text == "18°C in Paris."
        with client.messages.stream(model="claude-sonnet-5", max_tokens=50,
                                    messages=[{"role": "user", "content": "hi"}]) as s:
            assert s.get_final_text() == "18°C in Paris."
        assert emu.received[1].path.endswith(
            "/publishers/anthropic/models/claude-sonnet-5:streamRawPredict")


def test_openai_azure_client_agrees_with_the_emulator() -> None:
    with Emulator([CALL, ANSWER]) as emu:
        client = openai.OpenAI(base_url=f"{emu.base_url}/openai/v1/", api_key="azure-key",
                               max_retries=0)
        legacy = openai.AzureOpenAI(azure_endpoint=emu.base_url, api_key="azure-key",
                                    api_version="2024-10-21", max_retries=0)
        first = client.chat.completions.create(
            model="my-deployment", messages=[{"role": "user", "content": "Weather?"}],
            tools=[{"type": "function", "function": {"name": "get_weather", "parameters": dict(
                TOOL.input_schema)}}])
        assert json.loads(first.choices[0].message.tool_calls[0].function.arguments) == {
            "city": "Paris"}
        second = legacy.chat.completions.create(
            model="my-deployment", messages=[{"role": "user", "content": "Weather?"}])
        assert second.choices[0].message.content == "18°C in Paris."
        assert emu.received[0].path == "/openai/v1/chat/completions"
        assert emu.received[1].path == "/openai/deployments/my-deployment/chat/completions"
        assert emu.received[1].headers["api-key"] == "azure-key"



# --------------------------------------------------------------------------- the command line


def test_check_explain_and_convert_read_converse_bodies(tmp_path: Any, capsys: Any) -> None:
    from toolwire.cli.app import main

    body = {"messages": [
        {"role": "user", "content": [{"text": "Weather in Oslo and Bergen?"}]},
        {"role": "assistant", "content": [
            {"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {"city": "Oslo"}}},
            {"toolUse": {"toolUseId": "t2", "name": "get_weather",
                         "input": {"city": "Bergen"}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "status": "success",
                                                     "content": [{"text": "-2C"}]}}]}],
        "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather",
                                               "inputSchema": {"json": {"type": "object"}}}}]}}
    path = tmp_path / "converse.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    assert main(["check", str(path)]) == 1
    assert "call 't2' (get_weather) has no result" in capsys.readouterr().out
    assert main(["explain", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "bedrock-converse request" in shown and "answers call t1: -2C" in shown
    assert main(["convert", str(path), "--to", "openai-chat"]) == 0
    converted = json.loads(capsys.readouterr().out)
    assert [m["role"] for m in converted["messages"]] == ["user", "assistant", "tool"]
    stream = tmp_path / "converse-stream.bin"  # a captured ConverseStream body, binary
    stream.write_bytes(b"".join(get_codec("bedrock-converse").encode_stream(CALL)))
    assert main(["explain", str(stream)]) == 0
    shown = capsys.readouterr().out
    assert "bedrock-converse stream" in shown and 'tool call get_weather: id call_p1' in shown
    broken = tmp_path / "broken.bin"
    broken.write_bytes(b"\0\1\2" * 10)
    assert main(["explain", str(broken)]) == 2
    assert "is a binary file" in capsys.readouterr().err


def test_check_and_convert_read_captured_event_streams(tmp_path: Any, capsys: Any) -> None:
    from toolwire.cli.app import main
    from toolwire.emulator.cloud import reframe

    bad = Reply(message=Message(role="assistant", parts=(ToolCallPart(
        id="call_p1", name="get_weather", arguments={"city": "Paris"}),)), stop="tool_calls")
    converse = tmp_path / "converse-stream.bin"
    converse.write_bytes(b"".join(get_codec("bedrock-converse").encode_stream(CALL)))
    assert main(["check", str(converse)]) == 0  # the reply's call awaits its result: no error
    assert "1 messages, no problems for bedrock-converse" in capsys.readouterr().out
    assert main(["check", str(converse), "--wire", "gemini-generate", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["wire"] == "gemini-generate"
    dotted = tmp_path / "dotted.bin"  # an id Bedrock sends and Anthropic would refuse
    dotted.write_bytes(b"".join(get_codec("bedrock-converse").encode_stream(
        Reply(message=Message(role="assistant", parts=(ToolCallPart(
            id="tool.1", name="get_weather", arguments={}),)), stop="tool_calls"))))
    assert main(["check", str(dotted)]) == 0
    capsys.readouterr()
    assert main(["check", str(dotted), "--wire", "anthropic-messages"]) == 1
    assert capsys.readouterr().out.startswith("message 0: error [bad_call_id]")
    assert main(["convert", str(converse), "--to", "anthropic-messages"]) == 0
    out, err = capsys.readouterr()
    body = json.loads(out)
    assert "converted bedrock-converse stream -> anthropic-messages reply" in err
    assert body["stop_reason"] == "tool_use" and body["content"][1]["input"] == {"city": "Paris"}
    assert main(["convert", str(converse), "--to", "openai-chat", "--from", "openai-chat"]) == 2
    assert "is a bedrock-converse stream, not openai-chat" in capsys.readouterr().err
    invoke = tmp_path / "invoke-stream.bin"  # InvokeModel's chunks, each an Anthropic event
    invoke.write_bytes(b"".join(reframe(get_codec("anthropic-messages").encode_stream(bad))))
    assert main(["convert", str(invoke), "--to", "openai-chat"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["choices"][0]["message"]["tool_calls"][0]["id"] == "call_p1"
    assert "anthropic-messages stream" in err
