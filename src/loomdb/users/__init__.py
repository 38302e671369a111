"""Users of a shared store: who may call the HTTP API, and which trees are whose.

An area beside the core (see `loomdb.store.areas`): its own tables, all SQL through
`loom.unit(USERS)`. A user holds a token that is shown once and stored only as its
sha256, so a copy of the store does not hand out access; `rotate_token` replaces it
(the old one stops working, what the user owns stays theirs). Ownership is recorded per
tree, document and collection; refs, drafts and exports belong to whoever owns their
tree, items to whoever owns their collection, and an import is recorded with its
summary. With no users at all the store is single-user: nothing is
owned and everything is visible (the server then serves loopback only).
"""

from __future__ import annotations

from .access import Access, Everyone, Owner, owners, same_owner
from .accounts import (
    USERS,
    User,
    add_user,
    authenticate,
    has_users,
    list_users,
    remove_user,
    rotate_token,
    user_by_id,
)

__all__ = ["USERS", "Access", "Everyone", "Owner", "User", "add_user", "authenticate",
           "has_users", "list_users", "owners", "remove_user", "rotate_token",
           "same_owner", "user_by_id"]
