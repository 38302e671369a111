"""The secrets scanner's policy and findings, as the store keeps them (docs/security.md).

The policy is one JSON value in the store's settings (`secrets`): the default action,
the action per kind, and operator rules. Every Loom on the store reads it again
within `write_ops.POLICY_TTL` seconds; the Loom that changes it at once. The findings
are the table `secret_findings`: kind, node or generation record, place, span, action.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..secrets import ACTIONS, Policy
from ..secrets.rules import RULES
from ..storage_ops import storage

if TYPE_CHECKING:
    from ..loom import Loom

#: findings a read returns at most
MAX_FINDINGS = 10_000


def policy(loom: Loom) -> dict[str, Any]:
    """The store's policy: {default, kinds, rules, sources, known}, `known` the
    built-in kinds."""
    held = Policy.parse(storage(loom).forgetting().setting("secrets"))
    return {**held.as_dict(), "known": list(dict.fromkeys(r.kind for r in RULES))}


def set_policy(loom: Loom, actions: dict[str, str] | None = None,
               rules: dict[str, str] | None = None, source: str | None = None) -> dict[str, Any]:
    """Set actions per kind (`all` for the default; one of ACTIONS), for the store or
    for writes from `source` (a node's source: import, agent, human...), and operator
    rules (kind -> regex, its whole match the secret), in one transaction; the policy
    kept."""
    with storage(loom).transaction():
        forget = storage(loom).forgetting()
        held = Policy.parse(forget.setting("secrets"))
        for kind, action in (actions or {}).items():
            held.set(kind, action, source)
        for kind, pattern in (rules or {}).items():
            held.add_rule(kind, pattern)
        forget.set_setting("secrets", _json(held))
    storage(loom).forget_scanner()
    return policy(loom)


def findings(loom: Loom, *, tree: str | None = None, limit: int = 1000) -> list[dict[str, Any]]:
    """The scanner's findings, newest first (`tree`: that tree's); never the secret."""
    if not isinstance(limit, int) or not 1 <= limit <= MAX_FINDINGS:
        raise InvalidInput("limit", f"must be from 1 to {MAX_FINDINGS}")
    return storage(loom).forgetting().findings(limit=limit, tree=tree)


def _json(held: Policy) -> str:
    import json

    return json.dumps(held.as_dict(), sort_keys=True)


__all__ = ["ACTIONS", "MAX_FINDINGS", "findings", "policy", "set_policy"]
