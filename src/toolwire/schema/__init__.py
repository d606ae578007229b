"""Tools as contracts: a tool's schema derived, walked and shown, and calls checked against it.

``contract`` holds `Tool`; ``tool`` holds `Toolset`, `tool` and `validate_call` (all four
re-exported here and from ``tool``); ``derive``
builds schemas from Python functions and Pydantic models; ``walk`` rewrites and resolves JSON
Schema dicts; ``validate`` checks a call's arguments; ``report``, ``names`` and ``text`` word the
message a model gets when a call does not fit. Imports only `toolwire.errors` and
`toolwire.transcript` from the rest of toolwire.
"""

from toolwire.schema.tool import Tool, Toolset, tool, validate_call

__all__ = ["Tool", "Toolset", "tool", "validate_call"]
