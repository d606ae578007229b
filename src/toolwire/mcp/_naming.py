"""Tool names across several MCP servers: labels for servers and prefixes for clashing names.

Owns `server_label`, `spec_name`, `plan_names` and `unique_name`. Pure functions over
strings: no SDK, no I/O.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from toolwire.schema.names import unique_within

__all__ = ["MAX_NAME", "plan_names", "server_label", "spec_name", "unique_name"]

MAX_NAME = 64
"""The longest tool name every supported provider accepts."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def server_label(name: str | None, fallback: str) -> str:
    """A short prefix-safe label for a server: letters, digits, ``_`` and ``-`` only."""
    label = _UNSAFE.sub("_", (name or "").strip()).strip("_-")[:24]
    return label or fallback


def unique_name(candidate: str, taken: set[str]) -> str:
    return unique_within(candidate, taken, MAX_NAME)


def plan_names(
    servers: Sequence[tuple[str, Sequence[str]]], reserved: Collection[str] = ()
) -> tuple[list[dict[str, str]], list[str]]:
    """The name each server's tools get, and notes on every renaming.

    ``servers`` is ``(label, tool names)`` per server, labels unique. A name offered by more
    than one server, or already in ``reserved`` (tools from elsewhere), is given the server's
    label as a prefix (``label_name``) on every server that offers it, so no call is ambiguous.
    Returns, per server, a mapping from the server's tool name to the name the model sees.
    """
    counts = Counter(name for _, names in servers for name in dict.fromkeys(names))
    clashing = {name for name, count in counts.items() if count > 1 or name in reserved}
    taken = set(reserved) | {name for name in counts if name not in clashing}
    plans: list[dict[str, str]] = []
    renamed: dict[str, list[tuple[str, str]]] = {}
    for label, names in servers:
        plan: dict[str, str] = {}
        for name in dict.fromkeys(names):
            if name in clashing:
                new = unique_name(f"{label}_{name}", taken)
                renamed.setdefault(name, []).append((label, new))
            else:
                new = name
            taken.add(new)
            plan[name] = new
        plans.append(plan)
    notes = []
    for name, where in renamed.items():
        owners = [f"{label!r}" for label, _ in where]
        listed = owners[0] if len(owners) == 1 else f"{', '.join(owners[:-1])} and {owners[-1]}"
        also = " and by another tool" if name in reserved else ""
        new_names = ", ".join(f"{new!r} (server {label!r})" for label, new in where)
        notes.append(
            f"the tool name {name!r} is offered by MCP server{'s' if len(where) > 1 else ''} "
            f"{listed}{also}; it is called {new_names}"
        )
    return plans, notes


def spec_name(target: str | list[str]) -> str:
    """A name for a server that does not give one: its module, script, or host and port."""
    if isinstance(target, str):
        url = urlsplit(target)
        return f"{url.hostname or 'server'}_{url.port}" if url.port else url.hostname or "server"
    if "-m" in target[:-1]:
        return target[target.index("-m") + 1].rsplit(".", 1)[-1]
    for arg in reversed(target[1:]):
        if not arg.startswith("-"):
            return Path(arg).stem
    return Path(target[0]).stem
