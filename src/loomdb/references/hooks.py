"""What the references area offers the other areas (`loomdb.hooks`): the keys its
links hold, which garbage collection keeps."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hooks import AreaHooks
from . import service

if TYPE_CHECKING:
    from ..loom import Loom


class ReferenceHooks(AreaHooks):
    def held_keys(self, loom: Loom) -> set[str]:
        return set(service.link_keys(loom))


HOOKS = ReferenceHooks()
