"""Share links: read-only capabilities to one branch (see service)."""

from ..store.areas import Area

SHARES = Area("shares", "loomdb.shares")

__all__ = ["SHARES"]
