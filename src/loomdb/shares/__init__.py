"""Share links: read-only capabilities to one branch (see service)."""

from ..store.areas import Area

SHARES = Area("shares", "loomdb.shares", hooks="loomdb.shares.hooks:HOOKS")

__all__ = ["SHARES"]
