"""How fast the emulator streams a reply when asked to write it the way a model does.

Owns `Pacing` (the time to the first token, then tokens a second), `CHARS_PER_TOKEN` and
`carried` (how much a chunk carries, as the client's own stream decoder reads it). Imports only
the events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolwire.events import ReasoningDelta, TextDelta, ToolCallDelta

CHARS_PER_TOKEN = 4
"""What the emulator counts as one token when it paces a stream: four characters of text,
reasoning or call arguments, as the client's stream decoder reads them from a chunk."""


@dataclass(frozen=True, slots=True)
class Pacing:
    """How fast a paced stream comes: its first chunk is held ``first_token`` seconds, and
    every chunk after it as long as its tokens take at ``tokens_per_second`` (tokens counted
    as `CHARS_PER_TOKEN` characters of what the chunk carries: text, reasoning and argument
    JSON; a chunk that carries none of them, a stop or usage, comes at once)."""

    first_token: float = 0.0
    tokens_per_second: float | None = None

    def __post_init__(self) -> None:
        if self.first_token < 0 or (self.tokens_per_second is not None
                                    and not self.tokens_per_second > 0):
            raise ValueError(f"pacing needs first_token >= 0 and tokens_per_second > 0, got "
                             f"{self.first_token!r} and {self.tokens_per_second!r}")

    def hold(self, index: int, chars: int) -> float:
        """Seconds to hold chunk number ``index`` (from 0) that carries ``chars`` characters."""
        if index == 0:
            return self.first_token
        if self.tokens_per_second is None or not chars:
            return 0.0
        return chars / CHARS_PER_TOKEN / self.tokens_per_second


def carried(feed: Callable[[bytes], Any], chunk: bytes) -> int:
    """How many characters of text, reasoning and call arguments ``chunk`` carries, read by
    the wire's own stream decoder (0 for a chunk it cannot read: a broken one is not paced)."""
    try:
        events = feed(chunk)
    except Exception:
        return 0
    return sum(len(e.fragment) if type(e) is ToolCallDelta else len(e.text)
               for e in events if type(e) in _CARRIERS)


_CARRIERS = (TextDelta, ReasoningDelta, ToolCallDelta)


__all__ = ["CHARS_PER_TOKEN", "Pacing", "carried"]
