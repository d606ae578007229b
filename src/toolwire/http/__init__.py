"""Talking to servers: the transport seam, plain HTTP/1.1, cassettes, endpoints, the client.

``transport`` is the one seam (`Transport.send` / ``stream``) with httpx2 behind it; ``plain``
and ``connection`` are toolwire's own HTTP/1.1 transport for ``http://``; ``cassette`` records
and replays; ``endpoints`` turns a model id into a wire, a server and a key; ``client`` is
where a codec, an endpoint and a transport meet (`HttpModel`); ``local`` starts a llama.cpp
server on this machine. Imports codecs, never the agent layer. Nothing is re-exported here, so
importing one module does not load the others.
"""
