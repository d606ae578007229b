"""The server the emulator plays: a provider record's gaps and signing, read from the record.

Owns `Played` (what the emulator does differently when it plays a provider: the requests it
refuses as that server refuses them, the ids it sends, the SigV4 service every request must be
signed for). Without a provider to play it does none of it. Reads the provider registry and
`toolwire.http.quirks`; must not import a wire's codec module nor compare provider names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolwire.codecs.model_rules import SETTING
from toolwire.http import quirks
from toolwire.http.providers import PROVIDERS, get_provider
from toolwire.transcript import Reply


@dataclass(frozen=True, slots=True)
class Played:
    """The provider the emulator plays (``Emulator(plays=name)``): its ``quirks`` and the
    ``aws_service`` its requests are signed for (empty: not signed the AWS way)."""

    quirks: frozenset[str] = frozenset()
    aws_service: str = ""

    @classmethod
    def of(cls, name: str | None, rules: Mapping[str, bool] | None = None) -> Played:
        """The provider named ``name``, its quirks turned on or off by ``rules`` (code: on)."""
        if name is None:
            return cls()
        provider = get_provider(name)
        if provider is None:
            raise ValueError(f"the emulator cannot play {name!r}: no provider has that name; "
                             f"choose one of: {', '.join(PROVIDERS)}")
        found = quirks.active(provider.quirks, {SETTING: dict(rules or {})})
        return cls(found, provider.aws_service)

    def refusal(self, body: Mapping[str, Any]) -> str | None:
        """What the played server refuses of ``body``, in its words, or None."""
        return quirks.refusal(body, self.quirks) if self.quirks else None

    def reply(self, reply: Reply) -> Reply:
        """``reply`` as the played server sends it (its call ids, where it numbers them)."""
        return quirks.reused_ids(reply) if "reused_call_ids" in self.quirks else reply


__all__ = ["Played"]
