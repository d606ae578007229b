"""Built-in tools, one module per family.

``ask_user`` lets the model ask the person running it a question. Tools never import codecs,
the transport or the loop.
"""

from __future__ import annotations

from toolwire.tools.ask_user import ask_user

__all__ = ["ask_user"]
