"""Model ids: which wire, which server, which key.

Owns `parse_model_id` and `Endpoint`. A model id is ``provider:model`` with an optional
``@base_url`` suffix that sends that wire to another server:

=====================  ==================  ==========================================
provider               wire                key (environment variable)
=====================  ==================  ==========================================
``anthropic``          anthropic-messages  ANTHROPIC_API_KEY
``openai``             openai-chat         OPENAI_API_KEY
``openai-responses``   openai-responses    OPENAI_API_KEY
``openrouter``         openai-chat         OPENROUTER_API_KEY
``ollama``             ollama-chat         none (OLLAMA_HOST sets the server)
``gemini``             gemini-generate     GEMINI_API_KEY or GOOGLE_API_KEY
``openai-compatible``  openai-chat         OPENAI_API_KEY if set; ``@base_url`` required
``local``              openai-chat         none (starts a llama.cpp server here)
=====================  ==================  ==========================================

With ``@base_url`` a missing key is not an error (local servers need none); without it, a
missing key is a `ConfigError` naming the variable, raised before any request. Imports nothing
heavy; no I/O beyond reading the environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

from toolwire.errors import ConfigError


@dataclass(frozen=True, slots=True)
class _Provider:
    wire: str
    base_url: str
    key_vars: tuple[str, ...]
    path: str  # appended to the base URL; {model} is replaced for Gemini
    stream_path: str | None = None


PROVIDERS: dict[str, _Provider] = {
    "anthropic": _Provider("anthropic-messages", "https://api.anthropic.com",
                           ("ANTHROPIC_API_KEY",), "/v1/messages"),
    "openai": _Provider("openai-chat", "https://api.openai.com", ("OPENAI_API_KEY",),
                        "/v1/chat/completions"),
    "openai-responses": _Provider("openai-responses", "https://api.openai.com",
                                  ("OPENAI_API_KEY",), "/v1/responses"),
    "openrouter": _Provider("openai-chat", "https://openrouter.ai/api", ("OPENROUTER_API_KEY",),
                            "/v1/chat/completions"),
    "ollama": _Provider("ollama-chat", "http://127.0.0.1:11434", (), "/api/chat"),
    "gemini": _Provider("gemini-generate", "https://generativelanguage.googleapis.com",
                        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
                        "/v1beta/models/{model}:generateContent",
                        "/v1beta/models/{model}:streamGenerateContent?alt=sse"),
    "openai-compatible": _Provider("openai-chat", "", ("OPENAI_API_KEY",),
                                   "/v1/chat/completions"),
    "local": _Provider("openai-chat", "", (), "/v1/chat/completions"),
}

MODEL_ID_FORMS = (
    "anthropic:<model>",
    "openai:<model>",
    "openai-responses:<model>",
    "openrouter:<vendor/model>",
    "ollama:<model>",
    "gemini:<model>",
    "openai-compatible:<model>@<base_url>",
    "local:smollm2",
    "any of these + @<base_url> to send that wire to another server",
)


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

    @property
    def model_id(self) -> str:
        return f"{self.provider}:{self.model}"

    def url(self, *, stream: bool = False) -> str:
        path = self._stream_path if stream and self._stream_path else self._path
        path = path.replace("{model}", quote(self.model, safe=""))
        base = self.base_url.rstrip("/")
        # A base URL that already ends with the API version (".../v1") is not given it twice.
        for prefix in ("/v1beta", "/v1"):
            if path.startswith(prefix + "/") and base.endswith(prefix):
                path = path[len(prefix):]
                break
        return base + path

    def headers(self) -> dict[str, str]:
        """The auth and version headers this wire needs (never logged or recorded)."""
        out = {"content-type": "application/json"}
        if self.wire == "anthropic-messages":
            out["anthropic-version"] = "2023-06-01"
            if self.key:
                out["x-api-key"] = self.key
        elif self.wire == "gemini-generate":
            if self.key:
                out["x-goog-api-key"] = self.key
        elif self.key:
            out["authorization"] = f"Bearer {self.key}"
        return out


def parse_model_id(model_id: str, env: Mapping[str, str] | None = None) -> Endpoint:
    """Read a model id; raise `ConfigError` that lists the accepted forms when it is wrong."""
    env = os.environ if env is None else env
    provider, sep, rest = model_id.partition(":")
    if not sep or provider not in PROVIDERS:
        raise ConfigError(
            f"unknown model id {model_id!r}. Use one of: " + "; ".join(MODEL_ID_FORMS)
        )
    spec = PROVIDERS[provider]
    model, at, base_url = rest.partition("@")
    if not model:
        raise ConfigError(f"model id {model_id!r} names no model; write {provider}:<model>")
    if at and not base_url.startswith(("http://", "https://")):
        raise ConfigError(
            f"in model id {model_id!r}, {base_url!r} is not a base URL; "
            "write it as http://host:port or https://host"
        )
    if provider == "openai-compatible" and not at:
        raise ConfigError(
            f"model id {model_id!r} needs a server: write openai-compatible:<model>@<base_url>, "
            "for example openai-compatible:qwen3@http://127.0.0.1:8000"
        )
    if provider == "ollama" and not at:
        base_url = env.get("OLLAMA_HOST", "") or spec.base_url
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
    return Endpoint(
        provider=provider,
        wire=spec.wire,
        model=model,
        base_url=base_url,
        key=key,
        key_var=key_var or (spec.key_vars[0] if spec.key_vars else None),
        _path=spec.path,
        _stream_path=spec.stream_path,
    )


_PATHS = {
    "/v1/messages": "anthropic-messages",
    "/v1/chat/completions": "openai-chat",
    "/v1/responses": "openai-responses",
    "/api/chat": "ollama-chat",
}


def wire_for_path(path: str) -> tuple[str, bool] | None:
    """The wire served at ``path`` and whether the path itself asks for a stream (Gemini)."""
    for suffix, wire in _PATHS.items():
        if path.endswith(suffix) or path.endswith(suffix.replace("/v1/", "/", 1)):
            return wire, False
    if path.startswith("/v1beta/models/") or path.startswith("/v1/models/"):
        if path.endswith(":generateContent"):
            return "gemini-generate", False
        if path.endswith(":streamGenerateContent"):
            return "gemini-generate", True
    return None
