"""The front door's areas, acting for an explicit caller.

`loom.as_(caller)` is a `Door`: one object per area (`trees`, `nodes`, `refs`,
`buffer`, `documents`, `collections`, `references`, `search`, `forget`, `gc`,
`agents`, `users`, `shares`, `live`, `branches`, `pieces`), each method acting for `caller`, a
`loomdb.users.Access`: the local operator (`users.Everyone`, who sees the whole
store: the CLI, the library, MCP) or a user (`users.Owner`, who sees what they own:
the HTTP API with a token). Authorization
and name resolution happen here, once, for every edge: a name is resolved against
what the caller may see, an address naming something else is unknown, and a list or a
search holds only what the caller sees (the rules: `loomdb.front.sight`). The edges
(CLI, HTTP, MCP, gateway) are one call here plus serialization.

As in Datasette's actor / action / resource model, the caller is a value handed to
each operation, not a global: one Loom serves many callers side by side, each through
its own Door (cheap: a few objects, nothing read until used).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from ..users import Access
from .runtime import Runtime
from .sight import Sight

if TYPE_CHECKING:
    from ..exchanges.exchange import ClientFactory
    from .agents import Agents
    from .branches import Branches
    from .buffer import BufferDoor
    from .collections import Collections
    from .documents import Documents
    from .forget import Forget, Gc
    from .gateway import Gateway
    from .links import References, Search
    from .live import Live
    from .nodes import Nodes
    from .pieces import Pieces
    from .shares import Shares
    from .trees import Refs, Trees
    from .users import Users


class Door:
    """Every area's operations for one caller under one runtime. Each area module is
    imported on first use, so a call loads only its own."""

    def __init__(self, caller: Access, runtime: Runtime) -> None:
        self.caller = caller
        self.runtime = runtime
        self.sight = Sight(caller)

    @cached_property
    def trees(self) -> Trees:
        from .trees import Trees

        return Trees(self.sight, self.runtime)

    @cached_property
    def nodes(self) -> Nodes:
        from .nodes import Nodes

        return Nodes(self.sight, self.runtime)

    @cached_property
    def refs(self) -> Refs:
        from .trees import Refs

        return Refs(self.sight, self.runtime)

    @cached_property
    def buffer(self) -> BufferDoor:
        from .buffer import BufferDoor

        return BufferDoor(self.sight, self.runtime)

    @cached_property
    def documents(self) -> Documents:
        from .documents import Documents

        return Documents(self.sight, self.runtime)

    @cached_property
    def collections(self) -> Collections:
        from .collections import Collections

        return Collections(self.sight, self.runtime)

    @cached_property
    def references(self) -> References:
        from .links import References

        return References(self.sight, self.runtime)

    @cached_property
    def search(self) -> Search:
        from .links import Search

        return Search(self.sight, self.runtime)

    @cached_property
    def forget(self) -> Forget:
        from .forget import Forget

        return Forget(self.sight, self.runtime)

    @cached_property
    def gc(self) -> Gc:
        from .forget import Gc

        return Gc(self.sight, self.runtime)

    @cached_property
    def agents(self) -> Agents:
        from .agents import Agents

        return Agents(self.sight, self.runtime)

    def gateway(self, clients: ClientFactory | None = None) -> Gateway:
        """The model gateway's operations, every wire (the operator's), making model
        clients with `clients` (default: the runtime's providers); one per router."""
        from .gateway import Gateway

        return Gateway(self.sight, self.runtime, clients)

    @cached_property
    def users(self) -> Users:
        from .users import Users

        return Users(self.sight, self.runtime)

    @cached_property
    def shares(self) -> Shares:
        from .shares import Shares

        return Shares(self.sight, self.runtime)

    @cached_property
    def branches(self) -> Branches:
        from .branches import Branches

        return Branches(self.sight, self.runtime)

    @cached_property
    def pieces(self) -> Pieces:
        from .pieces import Pieces

        return Pieces(self.sight, self.runtime)

    @cached_property
    def live(self) -> Live:
        from .live import Live

        return Live(self.sight, self.runtime)


__all__ = ["Access", "Door", "Runtime"]
