"""The secrets scanner: what comes into a store is looked at before it is written.

`rules` holds loomdb's own rules, `scan` the scanner, the policy per kind (`redact`,
`refuse`, `warn`, `off`) and the walk over content blocks and recorded JSON. The
store calls it where content enters (write_ops.build_node, the text append's fast
path, the generation record); docs/security.md says what it finds and misses.
"""

from .scan import ACTIONS, Finding, Policy, Scanner, SecretRefused, marker

__all__ = ["ACTIONS", "Finding", "Policy", "Scanner", "SecretRefused", "marker"]
