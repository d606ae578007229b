"""Finding tools by what they do: a small BM25 index over tool specs, in process.

Owns `ToolIndex`: each tool is a bag of words made from its name (split at ``_``, ``-``, ``.``
and case changes, counted three times), its description, and the names and descriptions of its
parameters; a query is ranked with Okapi BM25 over those bags. Words are lower-cased and cut to
a rough stem (plural and verb endings, a final e), so "invoices" finds "invoice" and "sending" finds
"send". No dependency beyond the standard library. Must not import anything above
`toolwire.transcript`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolwire.transcript import ToolSpec

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_ENDINGS = ("ations", "ation", "ings", "ing", "ies", "ied", "ers", "er", "es", "ed", "s")
_STOP = frozenset({
    "a", "an", "and", "any", "are", "as", "at", "be", "by", "can", "do", "for", "from", "get",
    "give", "i", "in", "is", "it", "its", "me", "my", "of", "on", "or", "please", "show",
    "some", "that", "the", "their", "them", "this", "to", "up", "use", "want", "what", "which",
    "will", "with", "you", "your",
})
_K1, _B = 1.2, 0.75
_NAME_WEIGHT = 3


def stem(word: str) -> str:
    """``word`` lower-cased, its common English ending cut off when enough is left."""
    word = word.lower()
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            if ending in ("ies", "ied"):
                return word[: -len(ending)] + "y"
            return word[: -len(ending)]
    return word[:-1] if word.endswith("e") and len(word) >= 5 else word


def words(text: str) -> list[str]:
    """The stems of ``text``'s words, stop words left out."""
    out = []
    for match in _WORD.finditer(text):
        word = match.group().lower()
        if word not in _STOP:
            out.append(stem(word))
    return out


def _parameter_text(schema: Mapping[str, Any]) -> str:
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return ""
    pieces = []
    for name, sub in props.items():
        pieces.append(str(name))
        if isinstance(sub, Mapping) and isinstance(sub.get("description"), str):
            pieces.append(sub["description"])
    return " ".join(pieces)


def tool_words(spec: ToolSpec) -> list[str]:
    """The bag of words one tool is found by."""
    name = words(spec.name.replace("_", " ").replace("-", " ").replace(".", " "))
    return (name * _NAME_WEIGHT + words(spec.description)
            + words(_parameter_text(spec.input_schema)))


class ToolIndex:
    """BM25 over a fixed list of tools; `search` gives the best names for a query, best first."""

    def __init__(self, specs: Iterable[ToolSpec]) -> None:
        self.specs: tuple[ToolSpec, ...] = tuple(specs)
        self._bags = [Counter(tool_words(s)) for s in self.specs]
        self._lengths = [sum(bag.values()) for bag in self._bags]
        self._average = (sum(self._lengths) / len(self._lengths)) if self._lengths else 0.0
        seen: Counter[str] = Counter()
        for bag in self._bags:
            seen.update(bag.keys())
        count = len(self._bags)
        self._idf = {w: math.log(1 + (count - n + 0.5) / (n + 0.5)) for w, n in seen.items()}

    def search(self, query: str, limit: int = 5) -> list[ToolSpec]:
        """The tools that match ``query`` best (at most ``limit``, none that share no word)."""
        terms = set(words(query))
        scored: list[tuple[float, int]] = []
        for at, bag in enumerate(self._bags):
            score = 0.0
            norm = _K1 * (1 - _B + _B * self._lengths[at] / (self._average or 1.0))
            for term in terms:
                tf = bag.get(term, 0)
                if tf:
                    score += self._idf[term] * tf * (_K1 + 1) / (tf + norm)
            if score > 0:
                scored.append((-score, at))
        scored.sort()
        return [self.specs[at] for _, at in scored[: max(limit, 0)]]

    def names(self, query: str, limit: int = 5) -> Sequence[str]:
        return [s.name for s in self.search(query, limit)]


__all__ = ["ToolIndex", "stem", "tool_words", "words"]
