"""What every area object of the front door holds: the caller's sight and the runtime."""

from __future__ import annotations

from ..loom import Loom
from .runtime import Runtime
from .sight import Sight


class AreaDoor:
    """One area's operations, acting for one caller (see `loomdb.front.Door`)."""

    def __init__(self, sight: Sight, runtime: Runtime) -> None:
        self.sight = sight
        self.runtime = runtime
        self.loom: Loom = sight.loom


__all__ = ["AreaDoor"]
