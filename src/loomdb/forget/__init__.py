"""Forgetting: delete, redact, retention and the record of forgetting (issue 26).

`service` deletes and redacts; `areas` erases what the areas beside the core hold of
forgotten nodes; `retention` moves trees not touched for a while to the trash, and
`trash` keeps them there for a grace period (with holds that retention never takes)
before they are purged through `service.delete`. docs/forget.md says what each
erases, what it keeps and why the chain still holds.

The trash and the holds are this area's own tables (`RETENTION`); the record of
forgetting is the core's (migration 0006).
"""

from ..store.areas import Area

RETENTION = Area("retention", "loomdb.forget", hooks="loomdb.forget.hooks:HOOKS")

__all__ = ["RETENTION"]
