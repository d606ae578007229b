"""The AWS hosts that reuse a wire: Bedrock's OpenAI-compatible runtime (``/openai/v1``),
Bedrock's Mantle endpoint and Claude Platform on AWS, against the emulator playing each.

Each id resolves its host, path and authentication; a full run on each over loopback HTTP,
whole and streamed, recovers from throttling with every attempt signed anew; botocore, given
the bytes and the date of each attempt, computes the same signature for the host's SigV4
service, and the emulator refuses a signature for another service. The official clients
(openai's ``BedrockOpenAI``, anthropic's ``AnthropicAWS``) are accepted by the emulator the same
way, so the emulator and toolwire agree with them.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import anthropic
import botocore.auth
import openai
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from sdk_types import assert_sdk_valid
from toolwire import Agent, Message, RunStop, TextPart, ToolCallPart, check_transcript
from toolwire.emulator import Emulator, Fault
from toolwire.errors import ConfigError, PermissionDeniedError, RateLimitError
from toolwire.events import RetryEvent
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.http.endpoints import parse_model_id
from toolwire.http.providers import get_provider
from toolwire.http.sigv4 import AwsCredentials
from toolwire.schema.tool import Tool
from toolwire.transcript import Reply, Request

KEY, SECRET, TOKEN = "AKIDTOOLWIRE", "secret/key+1", "session-token"
AWS = {"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_SESSION_TOKEN": TOKEN,
       "AWS_REGION": "eu-west-3", "ANTHROPIC_AWS_WORKSPACE_ID": "wrkspc_01"}
CREDS = AwsCredentials(KEY, SECRET, TOKEN)

HOSTS = {  # provider: (model, wire, service, path)
    "bedrock-openai": ("openai.gpt-oss-120b", "openai-chat", "bedrock",
                       "/openai/v1/chat/completions"),
    "bedrock-responses": ("openai.gpt-oss-120b", "openai-responses", "bedrock",
                          "/openai/v1/responses"),
    "bedrock-mantle": ("openai.gpt-oss-120b", "openai-responses", "bedrock-mantle",
                       "/v1/responses"),
    "anthropic-aws": ("claude-sonnet-5", "anthropic-messages", "aws-external-anthropic",
                      "/v1/messages"),
}
CALL = Reply(message=Message(role="assistant", parts=(
    TextPart(text="Checking."),
    ToolCallPart(id="call_p1", name="get_weather", arguments={"city": "Paris"}))),
    stop="tool_calls")
ANSWER = Reply(message=Message.assistant("18°C in Paris."))
TOOL = Tool(name="get_weather", description="Weather for a city.",
            input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]}, fn=lambda city: f"18°C in {city}")


def test_each_host_resolves_its_url_and_signs_for_its_service() -> None:
    hosts = {"bedrock-openai": "https://bedrock-runtime.eu-west-3.amazonaws.com",
             "bedrock-responses": "https://bedrock-runtime.eu-west-3.amazonaws.com",
             "bedrock-mantle": "https://bedrock-mantle.eu-west-3.api.aws",
             "anthropic-aws": "https://aws-external-anthropic.eu-west-3.api.aws"}
    for provider, (model, wire, service, path) in HOSTS.items():
        endpoint = parse_model_id(f"{provider}:{model}", AWS)
        assert endpoint.wire == wire and endpoint.url() == hosts[provider] + path
        assert endpoint.signer is not None and endpoint.signer.service == service  # type: ignore
        assert get_provider(provider).aws_service == service  # type: ignore[union-attr]
        assert "authorization" not in endpoint.headers()
    claude = parse_model_id("anthropic-aws:claude-sonnet-5", AWS).headers()
    assert claude["anthropic-workspace-id"] == "wrkspc_01"
    assert claude["anthropic-version"] == "2023-06-01"


def test_a_mantle_model_served_under_openai_v1_is_reached_through_its_base_url() -> None:
    base = "https://bedrock-mantle.us-east-1.api.aws/openai/v1"
    endpoint = parse_model_id(f"bedrock-mantle:openai.gpt-5.5@{base}", AWS)
    assert endpoint.url() == f"{base}/responses"
    assert endpoint.signer.service == "bedrock-mantle"  # type: ignore[union-attr]


def test_api_keys_are_sent_as_bearer_tokens_instead_of_signing() -> None:
    mantle = parse_model_id("bedrock-mantle:openai.gpt-5.5", {
        "AWS_REGION": "us-east-1", "AWS_BEARER_TOKEN_BEDROCK": "bedrock-api-key"})
    assert mantle.signer is None and mantle.headers()["authorization"] == "Bearer bedrock-api-key"
    claude = parse_model_id("anthropic-aws:claude-sonnet-5", {
        "AWS_REGION": "us-east-1", "ANTHROPIC_AWS_API_KEY": "aws-key",
        "ANTHROPIC_AWS_WORKSPACE_ID": "wrkspc_01"})
    assert claude.signer is None and claude.headers()["authorization"] == "Bearer aws-key"
    moved = parse_model_id("anthropic-aws:claude-sonnet-5", {
        "ANTHROPIC_AWS_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_AWS_WORKSPACE_ID": "w"})
    assert moved.url() == "http://127.0.0.1:9/v1/messages"


@pytest.mark.parametrize(("model_id", "env", "named"), [
    ("anthropic-aws:claude", {**AWS, "ANTHROPIC_AWS_WORKSPACE_ID": ""},
     "ANTHROPIC_AWS_WORKSPACE_ID"),
    ("anthropic-aws:claude", {"AWS_REGION": "us-east-1", "ANTHROPIC_AWS_WORKSPACE_ID": "w",
                              "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"},
     "ANTHROPIC_AWS_API_KEY"),
    ("bedrock-mantle:m", {"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"}, "AWS_REGION"),
    ("bedrock-responses:m", {"AWS_REGION": "us-east-1",
                             "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"},
     "AWS_BEARER_TOKEN_BEDROCK"),
])
def test_a_missing_setting_is_named_before_any_request(model_id: str, env: dict[str, str],
                                                       named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        make_model(model_id, env=env)


def botocore_signature(received: Any, service: str, base_url: str,
                       monkeypatch: pytest.MonkeyPatch) -> str:
    """The Authorization botocore computes for a received request's bytes, at its date."""
    names = received.headers["authorization"].split("SignedHeaders=")[1].split(",")[0]
    kept = {n: received.headers[n] for n in names.split(";")
            if n not in ("host", "x-amz-date", "x-amz-security-token")}
    when = dt.datetime.strptime(received.headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: when)
    theirs = AWSRequest(method="POST", url=f"{base_url}{received.path}", data=received.raw,
                        headers=kept)
    SigV4Auth(Credentials(KEY, SECRET, TOKEN), service, "eu-west-3").add_auth(theirs)
    return str(theirs.headers["Authorization"])


@pytest.mark.parametrize("provider", list(HOSTS))
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_full_run_on_each_host_signed_as_it_expects(
        provider: str, stream: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    model_id, wire, service, path = HOSTS[provider]
    events: list[Any] = []
    script = [Fault(kind="rate_limit", retry_after=0.01), CALL, ANSWER]
    async with Emulator(script, aws_credentials=CREDS, plays=provider) as emu:
        model = make_model(f"{provider}:{model_id}@{emu.base_url}", env=AWS,
                           retry=RetryPolicy(base=0.001, max_wait=0.01), seed=1)
        agent = Agent(model=model, tools=[TOOL], stream=stream, on_event=events.append)
        result = await agent.arun("Weather in Paris?")
        await model.aclose()
        emu.assert_done()
    assert result.stop is RunStop.ANSWERED, result.error
    assert result.answer == "18°C in Paris." and check_transcript(result.messages, wire) == []
    retries = [e for e in events if isinstance(e, RetryEvent)]
    assert len(retries) == 1 and isinstance(retries[0].error, RateLimitError)
    assert [(r.wire, r.path) for r in emu.received] == [(wire, path)] * 3
    for received in emu.received:  # each attempt signed for the host's service, as botocore does
        auth = received.headers["authorization"]
        assert f"/eu-west-3/{service}/aws4_request" in auth
        assert botocore_signature(received, service, emu.base_url, monkeypatch) == auth
        assert received.headers["x-amz-security-token"] == TOKEN
        if wire == "openai-responses":
            assert_sdk_valid(received.body)
    if provider == "anthropic-aws":
        assert emu.received[0].headers["anthropic-workspace-id"] == "wrkspc_01"


async def test_a_signature_for_another_service_is_refused() -> None:
    async with Emulator([ANSWER], aws_credentials=CREDS, plays="bedrock-mantle") as emu:
        # bedrock-responses signs for "bedrock": Mantle wants "bedrock-mantle"
        model = make_model(f"bedrock-responses:m@{emu.base_url}", env=AWS,
                           retry=RetryPolicy(max_attempts=1))
        with pytest.raises(PermissionDeniedError, match="correct service: 'bedrock-mantle'"):
            await model.complete(Request(model="m", messages=(Message.user("hi"),)))
        await model.aclose()
    async with Emulator([ANSWER], aws_credentials=CREDS, plays="anthropic-aws") as emu:
        unsigned = make_model(f"anthropic:claude@{emu.base_url}", env={})
        with pytest.raises(PermissionDeniedError, match="Signature Version 4"):
            await unsigned.complete(Request(model="m", max_tokens=5,
                                            messages=(Message.user("hi"),)))
        await unsigned.aclose()


def test_openai_s_bedrock_client_is_accepted_by_the_emulator_playing_mantle() -> None:
    with Emulator([ANSWER, CALL], aws_credentials=CREDS, plays="bedrock-mantle") as emu:
        client = openai.BedrockOpenAI(aws_region="eu-west-3", aws_access_key_id=KEY,
                                      aws_secret_access_key=SECRET, aws_session_token=TOKEN,
                                      base_url=f"{emu.base_url}/openai/v1", max_retries=0)
        said = client.responses.create(model="openai.gpt-5.5", input="hi")
        called = client.responses.create(model="openai.gpt-5.5", input="weather?")
    assert said.output_text == ANSWER.text
    call = next(i for i in called.output if i.type == "function_call")
    assert call.call_id == "call_0"  # as Mantle numbers them
    assert "/bedrock-mantle/aws4_request" in emu.received[0].headers["authorization"]


@pytest.mark.parametrize("keyed", [False, True], ids=["sigv4", "api-key"])
def test_anthropic_s_aws_client_is_accepted_and_sends_what_toolwire_sends(keyed: bool) -> None:
    auth: dict[str, Any] = ({"api_key": "aws-key"} if keyed else {
        "aws_access_key": KEY, "aws_secret_key": SECRET, "aws_session_token": TOKEN})
    env = ({"AWS_REGION": "eu-west-3", "ANTHROPIC_AWS_API_KEY": "aws-key",
            "ANTHROPIC_AWS_WORKSPACE_ID": "wrkspc_01"} if keyed else AWS)
    with Emulator([ANSWER, ANSWER], aws_credentials=None if keyed else CREDS,
                  plays="anthropic-aws") as emu:
        client = anthropic.AnthropicAWS(aws_region="eu-west-3", workspace_id="wrkspc_01",
                                        base_url=emu.base_url, max_retries=0, **auth)
        said = client.messages.create(model="claude-sonnet-5", max_tokens=50,
                                      messages=[{"role": "user", "content": "hi"}])
        ours = make_model(f"anthropic-aws:claude-sonnet-5@{emu.base_url}", env=env)
        reply = asyncio.run(ours.complete(Request(model="m", max_tokens=50,
                                                  messages=(Message.user("hi"),))))
    assert said.content[0].text == reply.text == ANSWER.text  # type: ignore[union-attr]
    theirs, mine = (r.headers for r in emu.received)
    assert theirs["anthropic-workspace-id"] == mine["anthropic-workspace-id"] == "wrkspc_01"
    assert theirs["anthropic-version"] and mine["anthropic-version"] == "2023-06-01"
    if keyed:
        assert theirs["authorization"] == mine["authorization"] == "Bearer aws-key"
    else:
        scope = "/eu-west-3/aws-external-anthropic/aws4_request"
        assert scope in theirs["authorization"] and scope in mine["authorization"]
