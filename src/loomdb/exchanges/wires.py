"""The wire formats the gateway speaks, each a module of this package with the same
three parts (docs/architecture.md, "Add a wire format"):

    parse(gw, body, ...) -> Exchange      the body as the one internal request
    answer(ex, result) -> dict            the internal result as the wire's answer
    Chunks(ex).take(event) -> [dict]      the internal event stream as its chunks

and its `NAME`. `tests/gateway/test_wires.py` holds this list to the modules and to
their fixtures (`tests/fixtures/wires/<name>/`: a request as the wire's real client
sends it, and what it must record).
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: wire name -> its module, and the route it answers on
WIRES: dict[str, tuple[str, str]] = {
    "openai-chat": ("loomdb.exchanges.openai_chat", "/v1/chat/completions"),
    "openai-responses": ("loomdb.exchanges.responses", "/v1/responses"),
    "anthropic-messages": ("loomdb.exchanges.anthropic_messages", "/v1/messages"),
}


def wire(name: str) -> ModuleType:
    """The module of a wire."""
    return importlib.import_module(WIRES[name][0])
