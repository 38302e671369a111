"""simonw/llm's fragments and templates as pieces and templates (read by
`loomdb.interop.llm_pieces`, from the paths the operator gives only).

An aliased fragment becomes the piece named by its alias (a new version when its text
changed); one without an alias becomes `fragment-<its hash's first 12 characters>`. A
template's `system`, `prompt` (`$input` is the first message), `model` and `options`
come along, and its `fragments` / `system_fragments` when they name a piece (such as
an imported fragment's alias); what loomdb's templates do not hold (`defaults`,
`extract`, `schema_object`, `tools`, `functions`, attachments, a fragment that is a
path or URL) is reported per template, never followed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, LoomError
from ..interop import llm_pieces as L
from . import service as P

if TYPE_CHECKING:
    from ..loom import Loom

#: llm template fields a loomdb template carries (the others are reported)
_CARRIED = ("system", "prompt", "model", "options", "fragments", "system_fragments", "name")


def import_fragments(loom: Loom, scope: P.Scope, path: Path) -> dict[str, Any]:
    """Every fragment of a logs.db as a piece: {added, unchanged, skipped: [why]}."""
    added, unchanged, skipped = 0, 0, []
    for names, content in L.fragments(path, loom.limits):
        for name in names:
            try:
                if not isinstance(content, str):
                    raise InvalidInput(f"fragment {name[:100]}", "is not a text")
                _, _, new = P.add(loom, scope, name, content)
            except LoomError as exc:
                skipped.append(str(exc).splitlines()[0][:300])
                continue
            added, unchanged = added + new, unchanged + (not new)
    return {"added": added, "unchanged": unchanged, "skipped": skipped}


def import_templates(loom: Loom, scope: P.Scope, folder: Path) -> dict[str, Any]:
    """Every template of llm's templates folder as a template: {added, unchanged,
    skipped, left_out: {template: [what it does not carry]}}."""
    added, unchanged, skipped, left_out = 0, 0, [], {}
    for name, loaded in L.templates(folder, loom.limits):
        try:
            if isinstance(loaded, LoomError):
                raise loaded
            value, dropped = _template(loom, scope, loaded)
            _, _, new = P.add(loom, scope, name, json.dumps(value, ensure_ascii=False),
                              kind="template")
        except LoomError as exc:
            skipped.append(str(exc).splitlines()[0][:300])
            continue
        if dropped:
            left_out[name] = dropped
        added, unchanged = added + new, unchanged + (not new)
    return {"added": added, "unchanged": unchanged, "skipped": skipped, "left_out": left_out}


def _template(loom: Loom, scope: P.Scope, loaded: Any) -> tuple[dict[str, Any], list[str]]:
    """(a loomdb template, what of the llm template it does not carry)."""
    if isinstance(loaded, str):
        loaded = {"prompt": loaded}
    if not isinstance(loaded, dict):
        raise InvalidInput("template", "is neither a text nor a mapping")
    dropped = sorted(str(k) for k in loaded if k not in _CARRIED)
    out: dict[str, Any] = {}
    for key in ("system", "prompt", "model"):
        if isinstance(loaded.get(key), str):
            out[key] = loaded[key]
    if isinstance(loaded.get("options"), dict):
        out["options"] = loaded["options"]
    have = {p["name"] for p in P.listed(loom, scope) if p["kind"] == "piece"}
    pieces = [f for f in loaded.get("fragments") or [] if isinstance(f, str)]
    out["pieces"] = [f for f in pieces if f in have]
    dropped += [f"fragment {f[:100]}" for f in pieces if f not in have]
    system = [f for f in loaded.get("system_fragments") or [] if isinstance(f, str)]
    kept = [f for f in system if f in have][:1]
    if kept:
        out["system_piece"] = kept[0]
    dropped += [f"system fragment {f[:100]}" for f in system if f not in kept]
    return P.check_template(loom, scope, out), dropped
