"""Model ids: which wire, which server, which key.

Owns `parse_model_id`, `Endpoint` and `wire_for_path`. A model id is ``provider:model`` with an
optional ``@base_url`` suffix that sends that wire to another server. The providers are the
provider registry's (`toolwire.http.providers`, where `register_provider` adds one); the
built-in ones:

=========================  ===================  ==========================================
provider                   wire                 key (environment variable)
=========================  ===================  ==========================================
``anthropic``              anthropic-messages   ANTHROPIC_API_KEY
``openai``                 openai-chat          OPENAI_API_KEY
``openai-responses``       openai-responses     OPENAI_API_KEY
``openrouter``             openai-chat          OPENROUTER_API_KEY
``ollama``                 ollama-chat          none (OLLAMA_HOST sets the server)
``gemini``                 gemini-generate      GEMINI_API_KEY or GOOGLE_API_KEY
``gemini-interactions``    gemini-interactions  GEMINI_API_KEY or GOOGLE_API_KEY
``openai-compatible``      openai-chat          OPENAI_API_KEY if set; ``@base_url`` required
``local``                  openai-chat          none (starts a llama.cpp server here)
``bedrock``                bedrock-converse     AWS credentials (SigV4) or AWS_BEARER_TOKEN_BEDROCK
``bedrock-anthropic``      anthropic-messages   the same, through InvokeModel
``vertex``                 gemini-generate      Google ADC token; GOOGLE_CLOUD_PROJECT/LOCATION
``vertex-anthropic``       anthropic-messages   the same, through rawPredict
``vertex-interactions``    gemini-interactions  the same, the Interactions API (v1beta1)
``azure``                  openai-chat          AZURE_OPENAI_API_KEY or AZURE_OPENAI_AD_TOKEN
``azure-responses``        openai-responses     the same; AZURE_OPENAI_ENDPOINT names the resource
``ollama-responses``       openai-responses     none; Ollama's /v1/responses (OLLAMA_HOST)
``lmstudio-responses``     openai-responses     none; LM Studio's /v1/responses
``vllm-responses``         openai-responses     none; vLLM's /v1/responses
``llamacpp-responses``     openai-responses     none; llama.cpp's /v1/responses
``openrouter-responses``   openai-responses     OPENROUTER_API_KEY
``local-responses``        openai-responses     none (a llama.cpp server here, /v1/responses)
``bedrock-openai``         openai-chat          as ``bedrock``; the runtime's /openai/v1
``bedrock-responses``      openai-responses     as ``bedrock``; the runtime's /openai/v1
``bedrock-mantle``         openai-responses     as ``bedrock``; Bedrock's Mantle endpoint
``anthropic-aws``          anthropic-messages   ANTHROPIC_AWS_API_KEY or SigV4; a workspace id
=========================  ===================  ==========================================

What a Responses-compatible server refuses of its wire, and what is sent instead, is its
record's ``quirks`` (`toolwire.http.quirks`).

The cloud providers resolve their host, paths and authentication in `toolwire.http.cloud`;
SigV4 signs each attempt anew there.

With ``@base_url`` a missing key is not an error (local servers need none); without it, a
missing key is a `ConfigError` naming the variable, raised before any request.

Must not import: a codec module, the transport, anything heavy; no I/O beyond reading the
environment.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from toolwire.codecs.model_rules import EFFORT_RULES, find, setting
from toolwire.codecs.registry import wire_at
from toolwire.errors import ConfigError
from toolwire.http.cloud import HostCount, Signer, StreamAdapter
from toolwire.http.providers import (
    BEARER,
    PROVIDERS,
    Auth,
    BodyTransform,
    model_id_forms,
)

MODEL_ID_FORMS = model_id_forms()
"""The built-in providers' model id forms (`model_id_forms` also lists ones added later)."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where and how to send one model's requests."""

    provider: str
    wire: str
    model: str
    base_url: str
    key: str | None = field(default=None, repr=False)
    key_var: str | None = None
    _path: str = ""
    _stream_path: str | None = None
    _auth: Auth | None = None
    _transform: BodyTransform | None = field(default=None, compare=False, repr=False)
    _headers: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    signer: Signer | None = field(default=None, compare=False, repr=False)
    stream_adapter: Callable[[], StreamAdapter] | None = field(default=None, compare=False,
                                                               repr=False)
    count: HostCount | None = field(default=None, compare=False, repr=False)
    """A cloud host's own token-counting endpoint (`toolwire.http.cloud.HostCount`)."""

    @property
    def model_id(self) -> str:
        return f"{self.provider}:{self.model}"

    def url(self, *, stream: bool = False) -> str:
        path = self._stream_path if stream and self._stream_path else self._path
        return _url(self.base_url, path, self.model)

    def headers(self) -> dict[str, str]:
        """The auth and version headers this provider needs (never logged or recorded)."""
        auth = self._auth
        if auth is None:  # an Endpoint made by hand: its provider's way, if registered
            spec = PROVIDERS.get(self.provider)
            auth = spec.auth if spec is not None else BEARER
        return {"content-type": "application/json", **auth.headers(self.key), **self._headers}

    def prepare_body(self, body: dict[str, Any]) -> dict[str, Any]:
        """The request body as this provider wants it sent (most send it unchanged)."""
        return self._transform(body) if self._transform is not None else body


@functools.lru_cache(maxsize=256)  # a model sends to one or two URLs, every request
def _url(base_url: str, path: str, model: str) -> str:
    """``path`` (its ``{model}`` filled in) under ``base_url``."""
    path = path.replace("{model}", quote(model, safe=""))
    base = base_url.rstrip("/")
    # A base URL that already ends with the API version (".../v1") is not given it twice.
    for prefix in ("/v1beta", "/v1"):
        if path.startswith(prefix + "/") and base.endswith(prefix):
            path = path[len(prefix):]
            break
    return base + path


_ODD = re.compile("[\x00-\x20\x7f-\x9f\u2028\u2029\ufeff]")
"""Control characters and spaces: never part of a model id or a base URL."""


def _check_base_url(model_id: str, base_url: str) -> None:
    """Refuse a base URL with no host or a port outside 0-65535, before anything connects."""
    try:
        parts = urlsplit(base_url)
        parts.port  # noqa: B018 - reading the port checks its range
    except ValueError as exc:
        raise ConfigError(
            f"in model id {model_id!r}, {base_url!r} is not a valid base URL ({exc}); "
            "write it as http://host:port with a port from 1 to 65535"
        ) from None
    if not parts.hostname:
        raise ConfigError(f"in model id {model_id!r}, {base_url!r} names no host; write it as "
                          "http://host:port")


def without_credentials(model_id: str) -> str:
    """``model_id`` with any ``user:password@`` taken out of its base URL, for what is written
    down (a run log, a report): credentials come from the environment, never from a log."""
    head, at, base_url = model_id.partition("@")
    if not at:
        return model_id
    url = urlsplit(base_url)
    if "@" not in url.netloc:
        return model_id
    return f"{head}@{url._replace(netloc=url.netloc.rpartition('@')[2]).geturl()}"


def responses_if_allowed(model_id: str, options: Mapping[str, Any] | None) -> str:
    """``model_id`` moved to the Responses wire when its options allow it (the
    ``responses_for_reasoning`` per-model setting) and the model is an ``openai:`` GPT-5 model
    that Chat Completions refuses to let reason with tools (`toolwire.codecs.model_rules`)."""
    provider, _, rest = model_id.partition(":")
    spec = PROVIDERS.get(provider)
    if (spec is None or spec.reasoning_provider is None
            or not setting("responses_for_reasoning", options)):
        return model_id
    model = rest.partition("@")[0]
    if any(find(code, spec.wire, model) for code in EFFORT_RULES):
        return f"{spec.reasoning_provider}:{rest}"
    return model_id


def check_model_text(model_id: str) -> None:
    """Refuse text no model id holds: a control character or a space, or a base URL that is
    not plain ASCII; `ConfigError` naming it. The provider, the model and what the
    environment must hold for them are `parse_model_id`'s."""
    if odd := _ODD.search(model_id):
        raise ConfigError(f"model id {model_id!r} holds the character {odd.group()!r}, which "
                          "no model id or base URL has; write it again without it")
    base_url = model_id.partition("@")[2]
    if base_url and not base_url.isascii():
        raise ConfigError(f"in model id {model_id!r}, the base URL {base_url!r} is not plain "
                          "ASCII (a full-width or international letter); write the host in "
                          "ASCII (an international name as its xn-- form)")


def parse_model_id(model_id: str, env: Mapping[str, str] | None = None) -> Endpoint:
    """Read a model id; raise `ConfigError` that lists the accepted forms when it is wrong."""
    env = os.environ if env is None else env
    provider, sep, rest = model_id.partition(":")
    if not sep or provider not in PROVIDERS:
        raise ConfigError(
            f"unknown model id {model_id!r}. Use one of: " + "; ".join(model_id_forms())
        )
    spec = PROVIDERS[provider]
    model, at, base_url = rest.partition("@")
    check_model_text(model_id)
    if not model:
        raise ConfigError(f"model id {model_id!r} names no model; write {provider}:<model>")
    if at and not base_url.startswith(("http://", "https://")):
        raise ConfigError(
            f"in model id {model_id!r}, {base_url!r} is not a base URL; "
            "write it as http://host:port or https://host"
        )
    if at:
        _check_base_url(model_id, base_url)
    if spec.setup is not None:  # a cloud host: its own URL, paths and authentication
        cloud = spec.setup(model, env, base_url if at else None)
        return Endpoint(provider=provider, wire=spec.wire, model=model,
                        base_url=cloud.base_url, _path=cloud.path,
                        _stream_path=cloud.stream_path, _auth=Auth(None),
                        _transform=cloud.transform, _headers=dict(cloud.headers),
                        signer=cloud.signer, stream_adapter=cloud.stream_adapter,
                        count=cloud.count)
    if spec.needs_base_url and not at:
        raise ConfigError(
            f"model id {model_id!r} needs a server: write {provider}:<model>@<base_url>, "
            f"for example {provider}:qwen3@http://127.0.0.1:8000"
        )
    if spec.host_var and not at:
        base_url = env.get(spec.host_var, "") or spec.base_url
        if not base_url.startswith(("http://", "https://")):
            base_url = "http://" + base_url
    elif not at:
        base_url = spec.base_url
    key: str | None = None
    key_var: str | None = None
    for var in spec.key_vars:
        if env.get(var):
            key, key_var = env[var], var
            break
    if key is None and spec.key_vars and not at:
        names = " or ".join(spec.key_vars)
        raise ConfigError(
            f"{provider} needs an API key: set {names} in the environment "
            f"(for example: export {spec.key_vars[0]}=...), or give a server with "
            f"{provider}:{model}@<base_url>"
        )
    path, stream_path = spec.paths()
    return Endpoint(
        provider=provider,
        wire=spec.wire,
        model=model,
        base_url=base_url,
        key=key,
        key_var=key_var or (spec.key_vars[0] if spec.key_vars else None),
        _path=path,
        _stream_path=stream_path,
        _auth=spec.auth,
        _transform=spec.transform,
    )


def wire_for_path(path: str) -> tuple[str, bool] | None:
    """The wire served at ``path`` and whether the path itself asks for a stream (Gemini's
    does); `toolwire.codecs.registry.wire_at` also gives the model a path names."""
    route = wire_at(path)
    return None if route is None else (route.wire.name, route.stream)


__all__ = ["MODEL_ID_FORMS", "PROVIDERS", "Endpoint", "check_model_text", "parse_model_id",
           "wire_for_path"]
