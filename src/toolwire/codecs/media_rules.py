"""Each wire's media rules under the name it had when they lived here.

What a provider refuses of the media in a raw request body (a type, a size, an image's sides, a
count, a place media may not appear), worded as it words it, is the wire's own: its folder's
``media_problem``, which its ``check_body`` ends with and the emulator answers with the
provider's 400. This module gives the built-in wires' rules their former names
(`anthropic_problem`, `chat_problem`, `responses_problem`, `gemini_problem`,
`converse_problem`) for code that still calls them so; it sits above the wires, as the
registry does, and a new wire needs nothing here.
"""

from __future__ import annotations

from toolwire.codecs import (
    anthropic_messages,
    bedrock_converse,
    gemini_generate,
    openai_chat,
    openai_responses,
)

anthropic_problem = anthropic_messages.media_problem
chat_problem = openai_chat.media_problem
responses_problem = openai_responses.media_problem
gemini_problem = gemini_generate.media_problem
converse_problem = bedrock_converse.media_problem

__all__ = ["anthropic_problem", "chat_problem", "converse_problem", "gemini_problem",
           "responses_problem"]
