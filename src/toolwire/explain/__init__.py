"""Naming what every message in a model's context is doing, and what ended the loop.

``build`` turns a run log, a cassette or any wire body into an `Explanation` and renders it as
text; ``html`` draws the same `Explanation` as one self-contained page. An edge: nothing else
in toolwire imports it but the command line.
"""

from toolwire.explain.build import (
    Entry,
    Explanation,
    explain_body,
    explain_conversation,
    explain_file,
    render_text,
)

__all__ = [
    "Entry",
    "Explanation",
    "explain_body",
    "explain_conversation",
    "explain_file",
    "render_text",
]
