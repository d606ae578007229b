"""What a conversation's context costs and how much of it fits: prices, windows, estimates.

Owns nothing itself; its modules are `prices` (the money a reply's usage costs, from the
``genai-prices`` table, imported on first use), `windows` (the model-dependent numbers:
context windows, the smallest prefix a provider caches, which OpenRouter models take cache
breakpoints) and `estimate` (a fast local token estimate of a request). Every number that
depends on a model lives here, not in a codec. Imports only `toolwire.transcript` (and
``genai_prices`` lazily); never the loop, a codec, the transport or the emulator.
"""
