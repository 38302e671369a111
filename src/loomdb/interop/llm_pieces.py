"""simonw/llm's fragments and templates, read (`loomdb.pieces.llm` makes them pieces).

* **Fragments** live in llm's `logs.db`: `fragments` (id, hash, content, source) and
  `fragment_aliases` (alias -> fragment id). The database is opened read-only; the
  rows read are capped by `limits.foreign_messages`.
* **Templates** are YAML files in llm's templates folder (`llm templates path`), one
  per template, named by the file (`NAME.yaml`); a file holding only a text is a
  prompt, as llm reads it. Only `*.yaml` regular files directly inside the folder are
  read, each at most `limits.piece` bytes; nothing a template names is followed.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, MissingExtra
from ..limits import Limits


def _regular(path: Path, what: str) -> Path:
    if path.is_symlink() or not path.is_file():
        raise InvalidInput(what, f"{path.name!r} is not a regular file")
    return path


def fragments(path: Path, limits: Limits) -> list[tuple[list[str], Any]]:
    """(names, content) of every fragment: its aliases, else `fragment-<hash[:12]>`."""
    _regular(Path(path), "logs.db")
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    cap = limits.foreign_messages
    with closing(sqlite3.connect(uri, uri=True)) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "fragments" not in tables:
            return []
        aliases: dict[Any, list[str]] = {}
        if "fragment_aliases" in tables:
            for alias, fid in db.execute("SELECT alias, fragment_id FROM fragment_aliases "
                                         "ORDER BY alias LIMIT ?", (cap + 1,)):
                aliases.setdefault(fid, []).append(str(alias))
        rows = db.execute("SELECT id, hash, content FROM fragments ORDER BY id LIMIT ?",
                          (cap + 1,)).fetchall()
    if len(rows) > cap or sum(map(len, aliases.values())) > cap:
        raise InvalidInput("logs.db", f"holds over {cap} fragments "
                           "(LOOMDB_LIMIT_FOREIGN_MESSAGES)")
    out = []
    for fid, digest, content in rows:
        if not isinstance(digest, str) or not digest:
            digest = hashlib.sha256(str(content).encode("utf-8", "replace")).hexdigest()
        out.append((aliases.get(fid) or [f"fragment-{digest[:12]}"], content))
    return out


def templates(folder: Path, limits: Limits) -> Iterator[tuple[str, Any]]:
    """(name, the YAML's value, or the InvalidInput it was refused with) per template."""
    try:
        import yaml
    except ImportError:
        raise MissingExtra("reading llm's templates", "interop") from None
    folder = Path(folder)
    if not folder.is_dir():
        raise InvalidInput("templates", f"{folder.name!r} is not a folder")
    for path in sorted(folder.glob("*.yaml")):
        name = path.stem
        try:
            _regular(path, f"template {name}")
            if path.stat().st_size > limits.piece:
                raise InvalidInput(f"template {name}", "is over the piece size limit "
                                   "(LOOMDB_LIMIT_PIECE)")
            try:
                yield name, yaml.safe_load(path.read_text("utf-8"))
            except (yaml.YAMLError, UnicodeDecodeError) as exc:
                raise InvalidInput(f"template {name}",
                                   f"is not YAML ({type(exc).__name__})") from None
        except InvalidInput as exc:
            yield name, exc
