"""The gateway's service: an OpenAI-shaped request turned into an exchange with a
model and recorded as a path in the store (`exchange.py`, `record.py`), continued
responses (`responses.py`), buffer completions (`buffers.py`), and the area that
remembers which paths a request's messages already are (`paths.py`, area `gateway`).

The HTTP handlers (`loomdb.gateway.app`) reach it only through the front door
(`loomdb.front.gateway`): one call per endpoint, plus serialization."""
