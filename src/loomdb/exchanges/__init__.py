"""The gateway's service: a request of any wire (OpenAI Chat, OpenAI Responses,
Anthropic Messages: a module each, listed in `wires.py`) turned into one internal
exchange with a model and recorded as a path in the store (`exchange.py`, `record.py`,
`events.py` for streams), buffer completions (`buffers.py`), and the area that
remembers which paths a request's messages already are (`paths.py`, area `gateway`).

The HTTP handlers (`loomdb.gateway.app`) reach it only through the front door
(`loomdb.front.gateway`): one call per endpoint, plus serialization."""
