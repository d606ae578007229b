"""The cloud hosts of the wires: Amazon Bedrock, Claude Platform on AWS, Google Vertex AI and
Azure OpenAI.

Owns `CloudSetup` (what a model id on a cloud resolves to: base URL, paths, static headers, a
per-attempt `Signer`, a stream adapter, a body transform, the host's token-counting endpoint as
a `HostCount`: Bedrock's CountTokens for Converse and InvokeModel, Vertex AI's countTokens for
Gemini and count-tokens for Claude; Azure has none), the setup of each cloud provider
(`bedrock_setup`, `bedrock_anthropic_setup`, Bedrock's OpenAI-compatible runtime and Mantle
endpoints in `bedrock_openai_setup`, `bedrock_responses_setup`, `bedrock_mantle_setup`,
`anthropic_aws_setup`, `vertex_setup`, `vertex_anthropic_setup`, `azure_setup`), `GoogleToken`
(an OAuth2 token from google-auth, ``toolwire[vertex]``, refreshed before it expires) and
`InvokeChunks` (Bedrock's event stream of ``chunk`` events, each holding one Anthropic server-
sent event, turned back into that SSE text). Region, project and resource come from the
environment (``AWS_REGION``, ``GOOGLE_CLOUD_PROJECT`` and ``GOOGLE_CLOUD_LOCATION``,
``AZURE_OPENAI_ENDPOINT``) or the model id; a missing one is a `ConfigError` naming it, raised
before any request. Must not import the transport, the client or a wire's codec module; google-
auth is imported only when a Vertex token is asked for.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolwire._json import loads
from toolwire.codecs.eventstream import EventStreamFramer
from toolwire.codecs.registry import ANTHROPIC_MESSAGES
from toolwire.errors import ConfigError, JSONTextError, StreamError
from toolwire.http.sigv4 import SigV4Signer, credential_chain


class Signer(Protocol):
    """Headers that authenticate one attempt, computed over the exact bytes sent."""

    def __call__(self, method: str, url: str, headers: Mapping[str, str],
                 body: bytes) -> dict[str, str]: ...


class StreamAdapter(Protocol):
    """Turns a host's stream bytes into the bytes the wire's stream decoder reads."""

    def feed(self, data: bytes) -> bytes: ...

    def close(self) -> bytes: ...


BodyTransform = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class HostCount:
    """A cloud host's own token-counting endpoint: its ``path`` (``{model}`` filled in), the
    counting body ``body(sent, model)`` makes from the request body as the host takes it, and
    the reply ``field`` holding the count."""

    path: str
    field: str
    body: Callable[[Mapping[str, Any], str], dict[str, Any]]


@dataclass(frozen=True, kw_only=True, slots=True)
class CloudSetup:
    """What a cloud model id resolves to. ``count`` is the host's counting endpoint for this
    wire; None means it has none, and counting falls back to the local estimate."""

    base_url: str
    path: str
    stream_path: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    signer: Signer | None = None
    stream_adapter: Callable[[], StreamAdapter] | None = None
    transform: BodyTransform | None = None
    count: HostCount | None = None


def _kept(body: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: body[k] for k in keys if k in body}


BEDROCK_COUNT = "/model/{model}/count-tokens"
"""Bedrock's CountTokens: a Converse request or an InvokeModel body, counted for the model."""


def converse_count(body: Mapping[str, Any], model: str) -> dict[str, Any]:
    """Bedrock's CountTokens body for a Converse request."""
    return {"input": {"converse": _kept(body, (
        "messages", "system", "toolConfig", "additionalModelRequestFields"))}}


def invoke_count(body: Mapping[str, Any], model: str) -> dict[str, Any]:
    """Bedrock's CountTokens body for an InvokeModel body (sent as base64 bytes)."""
    raw = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    return {"input": {"invokeModel": {"body": base64.b64encode(raw).decode()}}}


def gemini_count(body: Mapping[str, Any], model: str) -> dict[str, Any]:
    """Vertex AI's countTokens body: the prompt's fields, unwrapped."""
    return _kept(body, ("contents", "systemInstruction", "tools", "generationConfig"))


def claude_count(body: Mapping[str, Any], model: str) -> dict[str, Any]:
    """Vertex AI's count-tokens body for Claude: the model and the Messages prompt."""
    return {"model": model, **_kept(body, ("messages", "system", "tools", "tool_choice",
                                           "thinking"))}


Setup = Callable[[str, Mapping[str, str], "str | None"], CloudSetup]
"""``(model, environment, base URL given in the id or None) -> CloudSetup``."""

# --------------------------------------------------------------------------- Amazon Bedrock

BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31"
VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16"


def aws_region(model: str, env: Mapping[str, str], given: str | None) -> str:
    """``AWS_REGION``, ``AWS_DEFAULT_REGION``, or the region of a model ARN."""
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if not region and model.startswith("arn:"):
        parts = model.split(":")
        region = parts[3] if len(parts) > 4 else ""
    if region:
        return region
    if given is not None:
        return "us-east-1"  # a server given by URL: any region signs
    raise ConfigError("Amazon Bedrock needs a region: set AWS_REGION (for example: export "
                      "AWS_REGION=us-east-1), or use a model ARN that names one")


BEDROCK_SERVICE = "bedrock"
MANTLE_SERVICE = "bedrock-mantle"
CLAUDE_AWS_SERVICE = "aws-external-anthropic"
"""The SigV4 service names: Bedrock's runtime, its Mantle endpoint, Claude Platform on AWS."""


def _aws_auth(env: Mapping[str, str], region: str, given: str | None,
              service: str = BEDROCK_SERVICE, key_var: str = "AWS_BEARER_TOKEN_BEDROCK",
              host: str = "Amazon Bedrock") -> tuple[dict[str, str], Signer | None]:
    token = env.get(key_var)
    if token:
        return {"authorization": f"Bearer {token}"}, None
    source = credential_chain(env)
    if source is not None:
        return {}, SigV4Signer(source, region=region, service=service)
    if given is not None:
        return {}, None
    raise ConfigError(f"{host} needs credentials: set AWS_ACCESS_KEY_ID and "
                      "AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones), name "
                      f"a profile of ~/.aws/credentials with AWS_PROFILE, set an API key "
                      f"in {key_var}, or set TOOLWIRE_AWS_CREDENTIALS=botocore "
                      "to use botocore's chain (pip install 'toolwire[aws]')")


def bedrock_setup(model: str, env: Mapping[str, str], given: str | None) -> CloudSetup:
    """``bedrock:<modelId>``: Converse at ``bedrock-runtime.{region}.amazonaws.com``."""
    region = aws_region(model, env, given)
    headers, signer = _aws_auth(env, region, given)
    return CloudSetup(base_url=given or f"https://bedrock-runtime.{region}.amazonaws.com",
                      path="/model/{model}/converse", stream_path="/model/{model}/converse-stream",
                      headers=headers, signer=signer,
                      count=HostCount(BEDROCK_COUNT, "inputTokens", converse_count))


def to_bedrock_invoke(body: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic Messages body as InvokeModel takes it: no ``model`` nor ``stream`` (both
    are in the URL), Bedrock's ``anthropic_version``."""
    out = {k: v for k, v in body.items() if k not in ("model", "stream")}
    out.setdefault("anthropic_version", BEDROCK_ANTHROPIC_VERSION)
    return out


_WIRE = ANTHROPIC_MESSAGES.name  # the wire InvokeModel's chunks carry


class InvokeChunks:
    """InvokeModelWithResponseStream's event stream back as Anthropic server-sent events."""

    def __init__(self) -> None:
        self._framer = EventStreamFramer()

    def feed(self, data: bytes) -> bytes:
        out: list[bytes] = []
        for message in self._framer.feed(data):
            try:
                payload = loads(message.payload) if message.payload else {}
            except JSONTextError:
                raise StreamError("a Bedrock stream event is not JSON", wire=_WIRE) from None
            if message.header(":message-type") in ("exception", "error"):
                kind = message.header(":exception-type") or message.header(":error-code")
                text = payload.get("message") if isinstance(payload, dict) else None
                event = {"type": "error", "error": {"type": _anthropic_type(kind),
                                                    "message": text or str(kind)}}
                out.append(f"event: error\ndata: {json.dumps(event)}\n\n".encode())
                continue
            raw = payload.get("bytes") if isinstance(payload, dict) else None
            if not isinstance(raw, str):
                continue  # events other than chunks carry nothing for the decoder
            try:
                text = base64.b64decode(raw, validate=True)
            except ValueError:
                raise StreamError("a Bedrock chunk is not base64", wire=_WIRE) from None
            out.append(b"data: " + text.replace(b"\n", b"") + b"\n\n")
        return b"".join(out)

    def close(self) -> bytes:
        self._framer.close()
        return b""


def _anthropic_type(kind: str | None) -> str:
    lowered = (kind or "").lower()
    for word, kind_name in (("throttling", "rate_limit_error"), ("validation",
                            "invalid_request_error"), ("unavailable", "overloaded_error")):
        if word in lowered:
            return kind_name
    return "api_error"


def bedrock_anthropic_setup(model: str, env: Mapping[str, str], given: str | None) -> CloudSetup:
    """``bedrock-anthropic:<modelId>``: Anthropic Messages through InvokeModel."""
    region = aws_region(model, env, given)
    headers, signer = _aws_auth(env, region, given)
    return CloudSetup(base_url=given or f"https://bedrock-runtime.{region}.amazonaws.com",
                      path="/model/{model}/invoke",
                      stream_path="/model/{model}/invoke-with-response-stream",
                      headers={"accept": "application/json", **headers}, signer=signer,
                      stream_adapter=InvokeChunks, transform=to_bedrock_invoke,
                      count=HostCount(BEDROCK_COUNT, "inputTokens", invoke_count))


def _bedrock_openai(host: str, path: str, service: str) -> Setup:
    def setup(model: str, env: Mapping[str, str], given: str | None) -> CloudSetup:
        region = aws_region(model, env, given)
        headers, signer = _aws_auth(env, region, given, service)
        return CloudSetup(base_url=given or f"https://{host.format(region=region)}", path=path,
                          headers=headers, signer=signer)

    return setup


bedrock_openai_setup = _bedrock_openai("bedrock-runtime.{region}.amazonaws.com",
                                       "/openai/v1/chat/completions", BEDROCK_SERVICE)
"""``bedrock-openai:<model>``: Chat Completions at Bedrock's runtime (``/openai/v1``)."""
bedrock_responses_setup = _bedrock_openai("bedrock-runtime.{region}.amazonaws.com",
                                          "/openai/v1/responses", BEDROCK_SERVICE)
"""``bedrock-responses:<model>``: the Responses API at Bedrock's runtime (``/openai/v1``)."""
bedrock_mantle_setup = _bedrock_openai("bedrock-mantle.{region}.api.aws", "/v1/responses",
                                       MANTLE_SERVICE)
"""``bedrock-mantle:<model>``: the Responses API at Bedrock's Mantle endpoint (``/v1``; a
model it serves under ``/openai/v1`` is reached with that base URL given)."""


def anthropic_aws_setup(model: str, env: Mapping[str, str], given: str | None) -> CloudSetup:
    """``anthropic-aws:<model>``: Claude Platform on AWS, the Messages API at
    ``aws-external-anthropic.{region}.api.aws`` with the workspace in a header."""
    given = given or env.get("ANTHROPIC_AWS_BASE_URL") or None
    region = aws_region(model, env, given)
    workspace = env.get("ANTHROPIC_AWS_WORKSPACE_ID")
    if not workspace:
        raise ConfigError("Claude Platform on AWS needs a workspace: set "
                          "ANTHROPIC_AWS_WORKSPACE_ID to the id of a workspace of the "
                          "AWS-linked organization")
    headers, signer = _aws_auth(env, region, given, CLAUDE_AWS_SERVICE, "ANTHROPIC_AWS_API_KEY",
                                "Claude Platform on AWS")
    return CloudSetup(base_url=given or f"https://aws-external-anthropic.{region}.api.aws",
                      path="/v1/messages", signer=signer,
                      headers={"anthropic-version": "2023-06-01",
                               "anthropic-workspace-id": workspace, **headers})


# --------------------------------------------------------------------------- Google Vertex AI


class GoogleToken:
    """An OAuth2 access token from Application Default Credentials (google-auth), refreshed
    when it is about to expire; a `Signer` that sends it as a bearer token."""

    def __init__(self) -> None:
        try:
            import google.auth
            import google.auth.transport.requests
        except ImportError:
            raise ConfigError("Vertex AI needs google-auth for its access tokens: pip install "
                              "'toolwire[vertex]'") from None
        try:
            self._creds, _ = google.auth.default(
                scopes=["https://www.googleapis.com/auth/cloud-platform"])
        except google.auth.exceptions.DefaultCredentialsError as exc:
            raise ConfigError(f"Vertex AI found no Google credentials ({exc}); run gcloud auth "
                              "application-default login") from None
        self._request = google.auth.transport.requests.Request
        self._lock = threading.Lock()

    def token(self) -> str:
        with self._lock:
            expiry = getattr(self._creds, "expiry", None)
            soon = expiry is not None and expiry - dt.datetime.now(dt.UTC).replace(
                tzinfo=None) < dt.timedelta(minutes=5)
            if not self._creds.valid or soon:
                self._creds.refresh(self._request())  # type: ignore[no-untyped-call]
            return str(self._creds.token)

    def __call__(self, method: str, url: str, headers: Mapping[str, str],
                 body: bytes) -> dict[str, str]:
        return {"authorization": f"Bearer {self.token()}"}


def vertex_host(location: str) -> str:
    if location == "global":
        return "https://aiplatform.googleapis.com"
    if location in ("us", "eu"):
        return f"https://aiplatform.{location}.rep.googleapis.com"
    return f"https://{location}-aiplatform.googleapis.com"


def _vertex_place(env: Mapping[str, str], given: str | None) -> tuple[str, str, Signer | None]:
    project, location = env.get("GOOGLE_CLOUD_PROJECT"), env.get("GOOGLE_CLOUD_LOCATION")
    missing = [n for n, v in (("GOOGLE_CLOUD_PROJECT", project),
                              ("GOOGLE_CLOUD_LOCATION", location)) if not v]
    if missing and given is None:
        raise ConfigError(f"Vertex AI needs {' and '.join(missing)}: for example export "
                          "GOOGLE_CLOUD_PROJECT=my-project GOOGLE_CLOUD_LOCATION=global")
    signer: Signer | None = None
    if env.get("GOOGLE_CLOUD_ACCESS_TOKEN"):
        token = env["GOOGLE_CLOUD_ACCESS_TOKEN"]
        signer = _static_bearer(token)
    elif given is None:
        signer = GoogleToken()
    return project or "project", location or "global", signer


def _static_bearer(token: str) -> Signer:
    def sign(method: str, url: str, headers: Mapping[str, str], body: bytes) -> dict[str, str]:
        return {"authorization": f"Bearer {token}"}

    return sign


def vertex_setup(model: str, env: Mapping[str, str], given: str | None) -> CloudSetup:
    """``vertex:<model>``: Gemini on Vertex AI."""
    project, location, signer = _vertex_place(env, given)
    base = f"/v1/projects/{project}/locations/{location}/publishers/google/models/{{model}}"
    return CloudSetup(base_url=given or vertex_host(location), path=f"{base}:generateContent",
                      stream_path=f"{base}:streamGenerateContent?alt=sse", signer=signer,
                      count=HostCount(f"{base}:countTokens", "totalTokens", gemini_count))


def vertex_interactions_setup(model: str, env: Mapping[str, str],
                              given: str | None) -> CloudSetup:
    """``vertex-interactions:<model>``: Gemini's Interactions API on Vertex AI (the model in
    the body, as on the Gemini API)."""
    project, location, signer = _vertex_place(env, given)
    path = f"/v1beta1/projects/{project}/locations/{location}/interactions"
    return CloudSetup(base_url=given or vertex_host(location), path=path, stream_path=path,
                      signer=signer)


def to_vertex_anthropic(body: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic Messages body as Vertex takes it: no ``model`` (it is in the URL),
    ``stream`` kept, Vertex's ``anthropic_version``."""
    out = {k: v for k, v in body.items() if k != "model"}
    out.setdefault("anthropic_version", VERTEX_ANTHROPIC_VERSION)
    return out


def vertex_anthropic_setup(model: str, env: Mapping[str, str], given: str | None) -> CloudSetup:
    """``vertex-anthropic:<model>``: Anthropic Messages through rawPredict."""
    project, location, signer = _vertex_place(env, given)
    base = f"/v1/projects/{project}/locations/{location}/publishers/anthropic/models/{{model}}"
    counting = base.replace("{model}", "count-tokens:rawPredict")
    return CloudSetup(base_url=given or vertex_host(location), path=f"{base}:rawPredict",
                      stream_path=f"{base}:streamRawPredict", signer=signer,
                      transform=to_vertex_anthropic,
                      count=HostCount(counting, "input_tokens", claude_count))


# --------------------------------------------------------------------------- Azure OpenAI


def _azure(path: str) -> Setup:
    def setup(model: str, env: Mapping[str, str], given: str | None) -> CloudSetup:
        base = given or env.get("AZURE_OPENAI_ENDPOINT", "")
        if not base:
            raise ConfigError("Azure OpenAI needs its resource: set AZURE_OPENAI_ENDPOINT (for "
                              "example https://my-resource.openai.azure.com), or write the id "
                              "as azure:<deployment>@https://my-resource.openai.azure.com")
        base = base.rstrip("/")
        for tail in ("/openai/v1", "/openai"):
            base = base.removesuffix(tail)
        headers: dict[str, str] = {}
        if env.get("AZURE_OPENAI_API_KEY"):
            headers["api-key"] = env["AZURE_OPENAI_API_KEY"]
        elif env.get("AZURE_OPENAI_AD_TOKEN"):
            headers["authorization"] = f"Bearer {env['AZURE_OPENAI_AD_TOKEN']}"
        elif given is None:
            raise ConfigError("Azure OpenAI needs a key: set AZURE_OPENAI_API_KEY (sent as the "
                              "api-key header) or an Entra ID token in AZURE_OPENAI_AD_TOKEN")
        return CloudSetup(base_url=base, path=path, headers=headers)

    return setup


azure_setup = _azure("/openai/v1/chat/completions")
azure_responses_setup = _azure("/openai/v1/responses")


__all__ = [
    "BEDROCK_ANTHROPIC_VERSION",
    "BEDROCK_SERVICE",
    "CLAUDE_AWS_SERVICE",
    "MANTLE_SERVICE",
    "VERTEX_ANTHROPIC_VERSION",
    "CloudSetup",
    "GoogleToken",
    "HostCount",
    "InvokeChunks",
    "Setup",
    "Signer",
    "StreamAdapter",
    "anthropic_aws_setup",
    "aws_region",
    "azure_responses_setup",
    "azure_setup",
    "bedrock_anthropic_setup",
    "bedrock_mantle_setup",
    "bedrock_openai_setup",
    "bedrock_responses_setup",
    "bedrock_setup",
    "claude_count",
    "converse_count",
    "gemini_count",
    "invoke_count",
    "to_bedrock_invoke",
    "to_vertex_anthropic",
    "vertex_anthropic_setup",
    "vertex_host",
    "vertex_setup",
]
