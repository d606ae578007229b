"""Names and values in messages to a model: quoting, listing, and the nearest known name.

Owns: `closest` (the name a misspelt one most likely meant: same letters up to case and
``_-.``, a few typos away, or one inside the other), JSON paths (``"opts.tags[0]"``) and the
small phrases every message shares, and `unique_within` (a name made unique among those
taken, within a length). Must not import anything from toolwire except
`schema.text`.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence
from typing import Any

from toolwire.schema.text import quote, show


def quote_all(names: Iterable[str], limit: int = 30) -> str:
    listed = list(names)
    text = ", ".join(quote(n) for n in listed[:limit])
    return text + (f" and {len(listed) - limit} more" if len(listed) > limit else "")


def _squash(name: str) -> str:
    """``name`` lowered, without ``_ - . `` and spaces (str.replace beats str.translate here)."""
    return name.lower().replace("_", "").replace("-", "").replace(".", "").replace(" ", "")


def _distance(a: str, b: str, limit: int) -> int:
    """Edit distance with transpositions; any value above ``limit`` means "too far"."""
    if a.startswith(b) or a.endswith(b):
        return len(a) - len(b)
    if b.startswith(a) or b.endswith(a):
        return len(b) - len(a)
    start = 0  # a shared start and end never change the distance: trim them first
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    end = 0
    while end < len(a) - start and end < len(b) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    a, b = a[start : len(a) - end], b[start : len(b) - end]
    if not a or not b:
        return len(a) + len(b)
    older: list[int] = []
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        ca = a[i - 1]
        current = [i]
        smallest = i
        for j in range(1, len(b) + 1):
            cb = b[j - 1]
            best = row[j - 1] + (ca != cb)
            if row[j] + 1 < best:
                best = row[j] + 1
            if current[j - 1] + 1 < best:
                best = current[j - 1] + 1
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb and older[j - 2] + 1 < best:
                best = older[j - 2] + 1
            current.append(best)
            if best < smallest:
                smallest = best
        if smallest > limit:
            return limit + 1
        older, row = row, current
    return row[-1]


Squashed = tuple[str, str, frozenset[str], int]
"""(name lowered without ``_-. ``, the name, its letters, the lowered name's length): a
candidate prepared once."""


def squashed(names: Iterable[str]) -> list[Squashed]:
    out = []
    for name in names:
        key = _squash(name)
        out.append((key, name, frozenset(key), len(key)))
    return out


def closest(word: str, candidates: Sequence[str]) -> str | None:
    """The candidate a misspelt or re-cased ``word`` most likely meant, or None.

    In order: the same name up to case and ``_-.``; a few typos away; one containing the
    other (``old_str`` -> ``old``, ``file`` -> ``file_path``).
    """
    return closest_among(word, squashed(candidates))


def closest_among(
    word: str, candidates: Sequence[Squashed], taken: Container[str] = ()
) -> str | None:
    """`closest` over candidates prepared with `squashed`, in one pass, skipping ``taken`` names."""
    target = _squash(word)
    if not target:
        return None
    size = len(target)
    limit = size // 3 or 1
    letters: set[str] | None = None
    best: str | None = None
    best_distance = limit + 1
    inside: str | None = None
    inside_gap = 0
    for key, name, key_letters, length in candidates:
        if name in taken:
            continue
        if key == target:
            return name
        gap = length - size if length > size else size - length
        if gap <= limit:  # cheap bounds first: each alone may already need too many edits
            if letters is None:
                letters = set(target)
            if len(letters - key_letters) <= limit:
                d = _distance(target, key, limit)
                if d < best_distance and d < size and d < length:
                    best, best_distance = name, d
        if (
            length >= 3
            and size >= 3
            and (inside is None or gap < inside_gap)
            and (key in target or target in key)
        ):
            inside, inside_gap = name, gap
    return best if best is not None else inside


def got(value: Any) -> str:
    kind = type(value)
    if kind is not str and kind is not int:  # the common cases skip the isinstance checks
        if isinstance(value, dict):
            return "an object"
        if isinstance(value, (list, tuple)):
            return "an array"
    return show(value)


def json_path(path: Sequence[str | int]) -> str:
    if len(path) == 1 and type(path[0]) is str:
        return quote(path[0])
    out = ""
    for step in path:
        out = (f"{out}.{step}" if out else step) if type(step) is str else f"{out}[{step}]"
    return quote(out) if out else "arguments"


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def unique_within(candidate: str, taken: Container[str], limit: int) -> str:
    """``candidate`` cut to ``limit`` characters, or when that is taken the first of
    ``candidate_2``, ``candidate_3``... (cut to fit the limit) that is not."""
    candidate = candidate[:limit]
    n = 2
    while candidate in taken:
        suffix = f"_{n}"
        candidate, n = candidate[: limit - len(suffix)] + suffix, n + 1
    return candidate
