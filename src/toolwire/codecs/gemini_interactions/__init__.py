"""The Gemini Interactions (``gemini-interactions``) wire, in the same modules as every wire.

Every wire folder has the same modules: ``codec`` (the functions `toolwire.codecs.get_codec`
hands out), ``request``, ``reply``, ``stream``, ``parts`` and ``schema``.
"""
