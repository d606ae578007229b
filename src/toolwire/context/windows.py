"""The numbers that depend on a model: context windows and prompt-caching thresholds.

Owns `context_window`, `cache_minimum`, `takes_breakpoints` and the tables they read
(`WINDOWS`, `CACHE_MINIMUMS`, `BREAKPOINT_MODELS`). Each table maps a model-name prefix to a
number; the longest prefix that matches wins, and a vendor prefix (``anthropic/`` as OpenRouter
writes it) is looked at without it too. A setting always beats the table (``Agent(context_window=
...)``); an unknown model has no window, and then only the provider's "context too long" error
tells the loop the context is full. Imports nothing from toolwire.
"""

from __future__ import annotations

WINDOWS: dict[str, int] = {
    "claude-": 200_000,
    "claude-sonnet-4-5": 200_000,
    "claude-opus-4": 200_000,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-5": 400_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "gemini-2.5": 1_048_576,
    "gemini-2.0": 1_048_576,
    "gemini-3": 1_048_576,
    "gemini-1.5-pro": 2_097_152,
    "llama3.1": 131_072,
    "llama3.2": 131_072,
    "llama3.3": 131_072,
    "qwen3": 40_960,
    "qwen2.5": 32_768,
    "mistral": 32_768,
    "smollm2": 8_192,
}
"""Model-name prefix -> context window in tokens (prompt and output together)."""

OLLAMA_DEFAULT_CONTEXT = 4096
"""The context Ollama gives a model when the request sets no ``num_ctx``."""

CACHE_MINIMUMS: dict[str, int] = {
    "claude-": 1024,
    "claude-opus-4-5": 4096,
    "claude-opus-4-6": 4096,
    "claude-opus-4-7": 2048,
    "claude-haiku-4-5": 4096,
    "claude-3-5-haiku": 2048,
    "claude-3-haiku": 2048,
    "claude-haiku-3": 2048,
    "gpt-": 1024,
    "o3": 1024,
    "o4": 1024,
    "gemini-2.5-flash": 1024,
    "gemini-2.5-pro": 4096,
    "gemini-3": 4096,
    "gemini-": 1024,
}
"""Model-name prefix -> the shortest prompt prefix (tokens) the provider caches; shorter
prefixes are silently not cached."""

BREAKPOINT_MODELS: tuple[str, ...] = ("anthropic/", "google/gemini")
"""OpenRouter model names whose upstream caches only at Anthropic-style ``cache_control``
markers (which OpenRouter passes through on text parts)."""


def _lookup(table: dict[str, int], model: str) -> int | None:
    prefixes = tuple(table)
    for name in (model, model.rpartition("/")[2]):
        if name.startswith(prefixes):  # one look for all (most names match none)
            return table[max((p for p in prefixes if name.startswith(p)), key=len)]
    return None


def context_window(model: str) -> int | None:
    """The context window of ``model`` in tokens, from `WINDOWS`; None when unknown."""
    return _lookup(WINDOWS, model)


def cache_minimum(model: str, default: int = 1024) -> int:
    """The shortest prefix (tokens) the provider caches for ``model``."""
    found = _lookup(CACHE_MINIMUMS, model)
    return default if found is None else found


def takes_breakpoints(model: str) -> bool:
    """Whether an OpenRouter model caches only at ``cache_control`` markers."""
    return model.startswith(BREAKPOINT_MODELS)


__all__ = [
    "BREAKPOINT_MODELS", "CACHE_MINIMUMS", "OLLAMA_DEFAULT_CONTEXT", "WINDOWS", "cache_minimum",
    "context_window", "takes_breakpoints",
]
