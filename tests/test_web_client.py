"""The page's client layer holds (docs/web.md, "The client layer"): `lib/api.js` is the
only place that calls `fetch` or builds an Authorization header, and no view names an
API path: every endpoint is a function of a `lib/<area>.js` module. Every lib module is
`// @ts-check` (svelte-check, in `make lint`, then holds it to the generated types)."""

from __future__ import annotations

import re
from pathlib import Path

WEB = Path(__file__).resolve().parents[1] / "web" / "src"
LIB = WEB / "lib"


def sources() -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in sorted(WEB.rglob("*"))
            if p.suffix in (".js", ".svelte") and p.name != "types.js"}


def test_only_the_api_module_fetches_or_sends_the_token() -> None:
    found = {p.relative_to(WEB).as_posix() for p, text in sources().items()
             if re.search(r"\bfetch\s*\(|Authorization", text)}
    assert found == {"lib/api.js"}


def test_views_name_calls_never_paths() -> None:
    paths = {p.relative_to(WEB).as_posix(): re.findall(r"""["'`]/api/[^"'`]*""", text)
             for p, text in sources().items() if not p.is_relative_to(LIB)}
    assert {k: v for k, v in paths.items() if v} == {}


def test_every_lib_module_is_type_checked() -> None:
    unchecked = [p.relative_to(WEB).as_posix() for p in sorted(LIB.rglob("*.js"))
                 if p.name != "types.js" and "// @ts-check" not in p.read_text(encoding="utf-8")]
    assert unchecked == []
