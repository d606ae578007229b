"""The provider registry: the servers toolwire can talk to, and how.

Owns `Provider` (one record per provider: the wire it speaks, its base URL and paths, the
environment variables that hold its key, its `Auth` strategy and any body transform), `Auth`
and the built-in strategies, and the registry (`register_provider`, `unregister_provider`,
`get_provider`, `provider_for`, `model_id_forms`). Several providers share one wire (OpenRouter
and every OpenAI-compatible server speak the OpenAI chat wire); what a wire is belongs to the
wire registry, `toolwire.codecs.registry`, and the providers name wires only through it.

Must not import: a codec module, the transport, anything that does I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolwire.codecs import registry as wires
from toolwire.context.windows import OLLAMA_DEFAULT_CONTEXT
from toolwire.http import cloud
from toolwire.http.cloud import Setup


@dataclass(frozen=True, slots=True)
class Auth:
    """How a provider takes its key: ``header`` carries ``scheme`` + the key (no header when
    ``header`` is None or there is no key); the ``always`` headers go with every request."""

    header: str | None = "authorization"
    scheme: str = "Bearer "
    always: tuple[tuple[str, str], ...] = ()

    def headers(self, key: str | None) -> dict[str, str]:
        out = dict(self.always)
        if key and self.header:
            out[self.header] = self.scheme + key
        return out


BEARER = Auth()
ANTHROPIC_KEY = Auth("x-api-key", "", (("anthropic-version", "2023-06-01"),))
GOOGLE_KEY = Auth("x-goog-api-key", "")
NO_AUTH = Auth(None)

BodyTransform = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True, kw_only=True, slots=True)
class Provider:
    """One provider: what a model id ``name:model`` means.

    ``path`` and ``stream_path`` default to the wire's (``{model}`` is replaced by the model).
    ``host_var`` names an environment variable that sets the server; ``needs_base_url`` says a
    model id must give one (``@base_url``); ``any_server`` marks the provider to name for its
    wire at a server given by ``@base_url`` (`provider_for`). ``form`` is how a model id for it
    is written in messages; ``transform`` rewrites a request body before it is sent.
    ``otel_name`` is the provider's ``gen_ai.provider.name`` in OpenTelemetry's GenAI
    conventions (default: ``name``). ``setup``, for a cloud host, resolves a model id to its
    URL, headers, signer and body transform (`toolwire.http.cloud`) instead of the fields above.
    ``prices`` is its id in the ``genai-prices`` table
    (`toolwire.context.prices`; ``""`` for a server that charges nothing, None to look the
    model up by its name alone).

    What the rest of toolwire needs to know of a provider is a field here, never a comparison
    of its name: ``first_party`` marks the provider's own API, which has the server-side
    features its wire describes (tool search, context management, fallbacks; the same wire
    through a cloud or a router may lack them); ``local_server`` marks a provider whose model
    id without ``@base_url`` starts a llama.cpp server for the model (`toolwire.http.local`);
    ``context_size`` is the body field (a path) that sets the server's context size, which the
    client fills with the model's window (the server otherwise uses ``default_context`` and
    cuts longer prompts silently); ``cache_markers`` marks a router whose upstreams cache at
    breakpoints, so a request to a model that takes them is sent with markers;
    ``reasoning_provider`` names the provider a model id moves to when the model may reason
    with tools only there (``responses_for_reasoning``); ``model_prefixes`` are how its
    models' names begin, to guess the provider of an id written without one; ``no_batch``
    says why it has no batch API toolwire drives (empty when it may have one); ``quirks``
    names what the server refuses of its wire and toolwire works around
    (`toolwire.http.quirks`); ``aws_service`` is the SigV4 service name a host signed the AWS
    way expects (what the emulator checks when it plays the provider).
    """

    name: str
    wire: str
    base_url: str
    key_vars: tuple[str, ...] = ()
    auth: Auth = BEARER
    path: str | None = None
    stream_path: str | None = None
    host_var: str | None = None
    needs_base_url: bool = False
    any_server: bool = False
    form: str = ""
    otel_name: str = ""
    prices: str | None = None
    first_party: bool = False
    local_server: bool = False
    context_size: tuple[str, ...] = ()
    default_context: int | None = None
    cache_markers: bool = False
    reasoning_provider: str | None = None
    model_prefixes: tuple[str, ...] = ()
    no_batch: str = ""
    quirks: tuple[str, ...] = ()
    aws_service: str = ""
    transform: BodyTransform | None = field(default=None, compare=False)
    setup: Setup | None = field(default=None, compare=False)

    @property
    def model_id_form(self) -> str:
        return self.form or f"{self.name}:<model>"

    def context_of(self, options: dict[str, Any], window: int | None) -> int | None:
        """The context size the server will use, for a provider with a ``context_size`` field:
        ``window`` is written there into ``options`` (the body keys a model adds) unless they
        set its first key already; the size the options then say, else ``default_context``."""
        head, *rest = self.context_size
        if window and head not in options:
            value: Any = window
            for key in reversed(rest):
                value = {key: value}
            options[head] = value
        given: Any = options
        for key in self.context_size:
            given = given.get(key) if isinstance(given, Mapping) else None
        return given if isinstance(given, int) else self.default_context

    def paths(self) -> tuple[str, str | None]:
        """The path of a request, and of a streamed one when the URL says so."""
        wire = wires.get_wire(self.wire)
        return self.path or wire.path, self.stream_path or wire.stream_path


_BEDROCK_NO_BATCH = ("Bedrock batch inference reads its requests from an S3 bucket and needs an "
                     "IAM service role allowed to read and write it, which toolwire does not "
                     "set up")
_VERTEX_NO_BATCH = ("Vertex AI batch prediction reads its requests from Cloud Storage or "
                    "BigQuery, which toolwire does not set up")
_AZURE_NO_BATCH = "Azure OpenAI batches need a global-batch deployment of their own"
_LOCAL_NO_BATCH = "a local server has no batch API"

_RESPONSES = wires.OPENAI_RESPONSES.name
_LLAMA_CPP = ("stateless", "function_tools_only", "text_tool_output", "no_token_count",
              "typed_items")
_RESPONSES_SERVERS = (  # servers that serve /v1/responses too, each with its gaps
    Provider(name="ollama-responses", wire=_RESPONSES, base_url="http://127.0.0.1:11434",
             host_var="OLLAMA_HOST", otel_name="ollama", prices="", no_batch=_LOCAL_NO_BATCH,
             quirks=("stateless", "function_tools_only", "plain_items", "no_tool_choice",
                     "no_token_count", "typed_items")),
    Provider(name="lmstudio-responses", wire=_RESPONSES, base_url="http://127.0.0.1:1234",
             otel_name="lm_studio", prices="", no_batch=_LOCAL_NO_BATCH,
             quirks=("function_tools_only", "no_token_count", "typed_items")),
    Provider(name="vllm-responses", wire=_RESPONSES, base_url="http://127.0.0.1:8000",
             otel_name="vllm", prices="", no_batch=_LOCAL_NO_BATCH,
             quirks=("stateless", "no_token_count", "typed_items")),
    Provider(name="llamacpp-responses", wire=_RESPONSES, base_url="http://127.0.0.1:8080",
             otel_name="llama.cpp", prices="", no_batch=_LOCAL_NO_BATCH,
             quirks=_LLAMA_CPP),
    Provider(name="openrouter-responses", wire=_RESPONSES, base_url="https://openrouter.ai/api",
             key_vars=("OPENROUTER_API_KEY",), form="openrouter-responses:<vendor/model>",
             otel_name="openrouter", prices="openrouter",
             quirks=("stateless", "no_token_count", "typed_items"),
             no_batch="OpenRouter has no batch API"),
    Provider(name="local-responses", wire=_RESPONSES, base_url="",
             form="local-responses:smollm2", otel_name="llama.cpp", prices="",
             local_server=True, no_batch=_LOCAL_NO_BATCH,
             quirks=_LLAMA_CPP),
)

_BUILT_IN = (
    Provider(name="anthropic", wire=wires.ANTHROPIC_MESSAGES.name,
             base_url="https://api.anthropic.com", key_vars=("ANTHROPIC_API_KEY",),
             auth=ANTHROPIC_KEY, any_server=True, otel_name="anthropic", prices="anthropic",
             first_party=True, model_prefixes=("claude",)),
    Provider(name="openai", wire=wires.OPENAI_CHAT.name, base_url="https://api.openai.com",
             key_vars=("OPENAI_API_KEY",), prices="openai", first_party=True,
             reasoning_provider=wires.OPENAI_RESPONSES.name,
             model_prefixes=("gpt-", "chatgpt", "o1", "o3", "o4")),
    Provider(name=wires.OPENAI_RESPONSES.name, wire=wires.OPENAI_RESPONSES.name,  # named after it
             base_url="https://api.openai.com", key_vars=("OPENAI_API_KEY",), any_server=True,
             otel_name="openai", prices="openai", first_party=True),
    Provider(name="openrouter", wire=wires.OPENAI_CHAT.name, base_url="https://openrouter.ai/api",
             key_vars=("OPENROUTER_API_KEY",), form="openrouter:<vendor/model>",
             prices="openrouter", cache_markers=True, no_batch="OpenRouter has no batch API"),
    Provider(name="ollama", wire=wires.OLLAMA_CHAT.name, base_url="http://127.0.0.1:11434",
             host_var="OLLAMA_HOST", any_server=True, prices="",
             context_size=("options", "num_ctx"), default_context=OLLAMA_DEFAULT_CONTEXT,
             no_batch=_LOCAL_NO_BATCH),
    Provider(name="gemini", wire=wires.GEMINI_GENERATE.name,
             base_url="https://generativelanguage.googleapis.com",
             key_vars=("GEMINI_API_KEY", "GOOGLE_API_KEY"), auth=GOOGLE_KEY,
             stream_path=f"{wires.GEMINI_GENERATE.stream_path}?alt=sse", any_server=True,
             otel_name="gcp.gemini", prices="google", model_prefixes=("gemini",)),
    Provider(name=wires.GEMINI_INTERACTIONS.name, wire=wires.GEMINI_INTERACTIONS.name,
             base_url="https://generativelanguage.googleapis.com",
             key_vars=("GEMINI_API_KEY", "GOOGLE_API_KEY"), auth=GOOGLE_KEY, any_server=True,
             otel_name="gcp.gemini", prices="google"),
    Provider(name="bedrock", wire=wires.BEDROCK_CONVERSE.name,
             base_url="https://bedrock-runtime.{region}.amazonaws.com", any_server=True,
             form="bedrock:<modelId>", otel_name="aws.bedrock", setup=cloud.bedrock_setup,
             prices="aws", no_batch=_BEDROCK_NO_BATCH),
    Provider(name="bedrock-anthropic", wire=wires.ANTHROPIC_MESSAGES.name,
             base_url="https://bedrock-runtime.{region}.amazonaws.com",
             form="bedrock-anthropic:<modelId>", otel_name="aws.bedrock",
             setup=cloud.bedrock_anthropic_setup, no_batch=_BEDROCK_NO_BATCH),
    Provider(name="vertex", wire=wires.GEMINI_GENERATE.name,
             base_url="https://{location}-aiplatform.googleapis.com", otel_name="gcp.vertex_ai",
             setup=cloud.vertex_setup, no_batch=_VERTEX_NO_BATCH),
    Provider(name="vertex-interactions", wire=wires.GEMINI_INTERACTIONS.name,
             base_url="https://{location}-aiplatform.googleapis.com", otel_name="gcp.vertex_ai",
             setup=cloud.vertex_interactions_setup, no_batch=_VERTEX_NO_BATCH),
    Provider(name="vertex-anthropic", wire=wires.ANTHROPIC_MESSAGES.name,
             base_url="https://{location}-aiplatform.googleapis.com", otel_name="gcp.vertex_ai",
             setup=cloud.vertex_anthropic_setup, no_batch=_VERTEX_NO_BATCH),
    Provider(name="azure", wire=wires.OPENAI_CHAT.name,
             base_url="https://{resource}.openai.azure.com", form="azure:<deployment>",
             otel_name="azure.ai.openai", setup=cloud.azure_setup, no_batch=_AZURE_NO_BATCH),
    Provider(name="azure-responses", wire=wires.OPENAI_RESPONSES.name,
             base_url="https://{resource}.openai.azure.com", form="azure-responses:<deployment>",
             otel_name="azure.ai.openai", setup=cloud.azure_responses_setup,
             no_batch=_AZURE_NO_BATCH),
    *_RESPONSES_SERVERS,
    Provider(name="bedrock-openai", wire=wires.OPENAI_CHAT.name,
             base_url="https://bedrock-runtime.{region}.amazonaws.com",
             form="bedrock-openai:<model>", otel_name="aws.bedrock",
             setup=cloud.bedrock_openai_setup, aws_service=cloud.BEDROCK_SERVICE,
             no_batch=_BEDROCK_NO_BATCH),
    Provider(name="bedrock-responses", wire=wires.OPENAI_RESPONSES.name,
             base_url="https://bedrock-runtime.{region}.amazonaws.com",
             form="bedrock-responses:<model>", otel_name="aws.bedrock",
             setup=cloud.bedrock_responses_setup, aws_service=cloud.BEDROCK_SERVICE,
             no_batch=_BEDROCK_NO_BATCH),
    Provider(name="bedrock-mantle", wire=wires.OPENAI_RESPONSES.name,
             base_url="https://bedrock-mantle.{region}.api.aws", form="bedrock-mantle:<model>",
             otel_name="aws.bedrock", setup=cloud.bedrock_mantle_setup,
             aws_service=cloud.MANTLE_SERVICE, quirks=("reused_call_ids",),
             no_batch=_BEDROCK_NO_BATCH),
    Provider(name="anthropic-aws", wire=wires.ANTHROPIC_MESSAGES.name,
             base_url="https://aws-external-anthropic.{region}.api.aws",
             form="anthropic-aws:<model>", otel_name="anthropic", prices="anthropic",
             setup=cloud.anthropic_aws_setup, aws_service=cloud.CLAUDE_AWS_SERVICE),
    Provider(name="openai-compatible", wire=wires.OPENAI_CHAT.name, base_url="",
             key_vars=("OPENAI_API_KEY",), needs_base_url=True, any_server=True,
             form="openai-compatible:<model>@<base_url>"),
    Provider(name="local", wire=wires.OPENAI_CHAT.name, base_url="", form="local:smollm2",
             otel_name="llama.cpp", prices="", local_server=True, no_batch=_LOCAL_NO_BATCH),
)

PROVIDERS: dict[str, Provider] = {p.name: p for p in _BUILT_IN}
"""Every registered provider by name (read it; change it with `register_provider`)."""


def register_provider(provider: Provider, *, replace: bool = False) -> Provider:
    """Add ``provider``; from then on ``name:model`` model ids reach it."""
    if provider.name in PROVIDERS and not replace:
        raise ValueError(f"a provider named {provider.name!r} is already registered")
    wires.get_wire(provider.wire)  # ValueError for a wire nobody registered
    PROVIDERS[provider.name] = provider
    return provider


def unregister_provider(name: str) -> None:
    """Remove a provider (a missing name is not an error)."""
    PROVIDERS.pop(name, None)


def get_provider(name: str) -> Provider | None:
    return PROVIDERS.get(name)


def provider_for(wire: str) -> str:
    """The provider to name in a model id that sends ``wire`` to a server given by
    ``@base_url`` (the one marked ``any_server``, else the first that speaks it)."""
    speakers = [p for p in PROVIDERS.values() if p.wire == wire]
    if not speakers:
        raise ValueError(f"no provider speaks the wire {wire!r}")
    return next((p for p in speakers if p.any_server), speakers[0]).name


def host_vars() -> tuple[str, ...]:
    """Every environment variable that sets a provider's server (``host_var``)."""
    return tuple(p.host_var for p in PROVIDERS.values() if p.host_var)


def guess_provider(model: str) -> str | None:
    """The provider a model id written without one most likely meant, by how the model's
    name begins (its ``model_prefixes``); None when no name begins so."""
    lowered = model.lower()
    return next((p.name for p in PROVIDERS.values()
                 if any(lowered.startswith(start) for start in p.model_prefixes)), None)


def model_id_forms() -> tuple[str, ...]:
    """How model ids are written, one form per provider, for messages and help."""
    return (*(p.model_id_form for p in PROVIDERS.values()),
            "any of these + @<base_url> to send that wire to another server")


__all__ = [
    "ANTHROPIC_KEY",
    "BEARER",
    "GOOGLE_KEY",
    "NO_AUTH",
    "PROVIDERS",
    "Auth",
    "BodyTransform",
    "Provider",
    "get_provider",
    "guess_provider",
    "host_vars",
    "model_id_forms",
    "provider_for",
    "register_provider",
    "unregister_provider",
]
