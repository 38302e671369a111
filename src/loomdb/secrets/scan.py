"""The scanner: find spans, apply a store's policy to them, walk content and JSON.

A policy maps a kind to an action: `redact` (the span is replaced by
`[redacted:<kind>]` before anything is written), `refuse` (the write fails with one
line naming the place and the kind, nothing written), `warn` (kept, and listed in
the findings), `off` (not looked for). Kinds not named take the policy's default,
`redact`. A finding says what kind, where (a path into the value such as
`content[1].input.command`, and the character span in that string) and what was
done, never the secret itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidInput
from .rules import PLACEHOLDER, QUIET_KINDS, RULES, Rule

ACTIONS = ("redact", "refuse", "warn", "off")
#: rules whose secret group is a free-form value: a placeholder there is no secret
_CHECK_PLACEHOLDER = {"password-in-url", "password-assignment", "authorization-header"}
_KIND = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")
#: texts this long are remembered once scanned (a shorter one costs less to scan again
#: than to look up), up to `_KEPT` characters in all
_LONG = 4096
_KEPT = 2 * 1024 * 1024


def marker(kind: str) -> str:
    """What a redacted span becomes."""
    return f"[redacted:{kind}]"


class _Recent:
    """The spans of the last long texts scanned, by the rules that scanned them: a
    write scans a value once to key it and again to store it, through scanners of the
    same policy. At most `_KEPT` characters of text are held."""

    def __init__(self) -> None:
        self.found: dict[tuple[str, str], tuple[tuple[int, int, str], ...]] = {}
        self.chars = 0

    def get(self, rules: str, text: str) -> tuple[tuple[int, int, str], ...] | None:
        return self.found.get((rules, text))

    def put(self, rules: str, text: str, spans: tuple[tuple[int, int, str], ...]) -> None:
        if self.chars + len(text) > _KEPT:
            self.found, self.chars = {}, 0
        self.found[(rules, text)] = spans
        self.chars += len(text)


_RECENT = _Recent()


class SecretRefused(InvalidInput):
    """A write holding a secret of a kind the store refuses: nothing was written."""


@dataclass(frozen=True)
class Finding:
    """One secret found: its kind, where (`place`, and `start`/`end` in that string of
    the value as it came in), and the action taken."""

    kind: str
    place: str
    start: int
    end: int
    action: str
    rule: str = "loomdb"

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "place": self.place, "start": self.start,
                "end": self.end, "action": self.action, "rule": self.rule}


#: where a write comes from, as its node says (`loomdb.model.SOURCES`, which this
#: layer does not import; a test holds them equal): a policy may differ per source (an
#: import of old transcripts warned, live writes refused, say)
SOURCE_NAMES = ("human", "trigger", "agent", "webhook", "cron", "event", "import")


@dataclass
class Policy:
    """The action per kind (`default` for kinds not named), the same per source
    (`sources`: source -> {"default"?, "kinds"?}, over the store's) and operator rules."""

    default: str = "redact"
    kinds: dict[str, str] = field(default_factory=dict)
    rules: list[dict[str, Any]] = field(default_factory=list)
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)

    def action(self, kind: str, source: str | None = None) -> str:
        """What a finding of `kind` in a write from `source` gets: the source's action
        for the kind, else the source's default, else the store's action for the kind,
        else the store's default (a kind of entropy alone is `warn` where a default is
        `redact`)."""
        own = self.sources.get(source or "") if self.sources else None
        if own is not None:
            if kind in own.get("kinds", {}):
                return str(own["kinds"][kind])
            if "default" in own:
                return self._unnamed(kind, str(own["default"]))
        if kind in self.kinds:
            return self.kinds[kind]
        return self._unnamed(kind, self.default)

    @staticmethod
    def _unnamed(kind: str, default: str) -> str:
        return QUIET_KINDS.get(kind, default) if default == "redact" else default

    def looks_for(self, kind: str) -> bool:
        """Whether any source's action for `kind` is other than `off`."""
        return any(self.action(kind, s) != "off" for s in (None, *self.sources))

    def as_dict(self) -> dict[str, Any]:
        return {"default": self.default, "kinds": dict(self.kinds), "rules": list(self.rules),
                "sources": {s: {k: (dict(v) if isinstance(v, dict) else v)
                                for k, v in p.items()} for s, p in self.sources.items()}}

    @classmethod
    def parse(cls, text: str | None) -> Policy:
        """The policy a store keeps (JSON), or the default one."""
        if not text:
            return cls()
        data = json.loads(text)
        return cls(data.get("default", "redact"), dict(data.get("kinds", {})),
                   list(data.get("rules", [])), dict(data.get("sources", {})))

    def set(self, kind: str, action: str, source: str | None = None) -> None:
        """Set `kind`'s action (`all`: the default for every kind), for the store or,
        with `source`, for writes from that source."""
        if action not in ACTIONS:
            raise InvalidInput("secrets policy", f"{action!r} is not one of {', '.join(ACTIONS)}")
        if source is not None:
            if source not in SOURCE_NAMES:
                raise InvalidInput("secrets policy source",
                                   f"{source!r} is not one of {', '.join(SOURCE_NAMES)}")
            own = self.sources.setdefault(source, {})
            if kind == "all":
                own.clear()
                own["default"] = action
                return
            check_kind(kind)
            own.setdefault("kinds", {})[kind] = action
            return
        if kind == "all":
            self.default, self.kinds = action, {}
            return
        check_kind(kind)
        self.kinds[kind] = action

    def add_rule(self, kind: str, pattern: str) -> None:
        """An operator's rule: a regex whose whole match is a secret of `kind`."""
        check_kind(kind)
        try:
            re.compile(pattern)
        except re.error as exc:
            raise InvalidInput("secrets rule", f"not a valid regular expression: {exc}") from None
        self.rules = [r for r in self.rules if r["kind"] != kind] + [
            {"kind": kind, "pattern": pattern}]


def check_kind(kind: str) -> None:
    if not _KIND.fullmatch(kind):
        raise InvalidInput("secret kind", f"{kind!r} is not a kind name (a-z, 0-9, -)")


class Scanner:
    """A policy's compiled rules: `text` finds and applies, `blocks` and `json_text`
    walk a value. Stateless once built; one per policy."""

    def __init__(self, policy: Policy | None = None) -> None:
        self.policy = policy or Policy()
        extra = tuple(Rule(r["kind"], (), r["pattern"]) for r in self.policy.rules)
        self.rules = tuple(r for r in (*RULES, *extra) if self.policy.looks_for(r.kind))
        self._operator = {r.kind for r in extra}
        # every rule's literals in one flat list each (cased, folded): a plain text
        # costs one substring test per literal and nothing else
        self._cased = [(n, i) for i, r in enumerate(self.rules) if not r.fold for n in r.needles]
        self._folded = [(n, i) for i, r in enumerate(self.rules) if r.fold for n in r.needles]
        self._always = [i for i, r in enumerate(self.rules) if not r.needles]
        #: what the rules are, as one text: scanners of the same rules share what
        #: they found (see `_Recent`)
        self._signature = "\x00".join(f"{r.kind}\x01{r.regex}\x01{r.group}\x01{r.fold}"
                                      for r in self.rules)

    @property
    def active(self) -> bool:
        return bool(self.rules)

    def _candidates(self, text: str) -> list[Rule]:
        """The rules one of whose needles `text` holds (substring tests, no regex)."""
        hits = [i for n, i in self._cased if n in text]
        if self._folded:
            lower = text.lower()
            hits += [i for n, i in self._folded if n in lower]
        hits += [i for i in self._always if (gate := self.rules[i].gate) is None or gate(text)]
        if not hits:
            return []
        return [self.rules[i] for i in sorted(set(hits))]

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, kind) of every secret in `text`, in order, not overlapping
        (the first rule to claim a character keeps it)."""
        if len(text) < _LONG:
            return self._spans(text)
        known = _RECENT.get(self._signature, text)
        if known is None:
            known = tuple(self._spans(text))
            _RECENT.put(self._signature, text, known)
        return list(known)

    def _spans(self, text: str) -> list[tuple[int, int, str]]:
        found: list[tuple[int, int, str]] = []
        for rule in self._candidates(text):
            for m in rule.pattern.finditer(text):
                start, end = m.span(rule.group)
                if start == end:
                    continue
                if rule.kind in _CHECK_PLACEHOLDER and PLACEHOLDER.match(m.group(rule.group)):
                    continue
                if rule.check is not None and not rule.check(text, start, end):
                    continue
                if any(s < end and start < e for s, e, _ in found):
                    continue
                found.append((start, end, rule.kind))
        found.sort()
        return found

    def text(self, text: str, place: str, out: list[Finding], source: str | None = None) -> str:
        """`text` with the policy applied (for a write from `source`); findings appended
        to `out`. Raises SecretRefused when a kind found is refused."""
        spans = self.spans(text)
        if not spans:
            return text
        pieces: list[str] = []
        last = 0
        for start, end, kind in spans:
            action = self.policy.action(kind, source)
            if action == "off":
                continue
            rule = "operator" if kind in self._operator else "loomdb"
            if action == "refuse":
                raise SecretRefused(place, f"holds a secret ({kind}, characters {start}-{end})"
                                    " and this store refuses them (`loomdb secrets` policy);"
                                    " nothing was written")
            out.append(Finding(kind, place, start, end, action, rule))
            if action == "redact":
                pieces += [text[last:start], marker(kind)]
                last = end
        pieces.append(text[last:])
        return "".join(pieces)

    def value(self, value: Any, place: str, out: list[Finding], source: str | None = None) -> Any:
        """A JSON-like value with every string in it (not keys) scanned; the same object
        when nothing was redacted."""
        if isinstance(value, str):
            return self.text(value, place, out, source)
        if isinstance(value, list):
            new = [self.value(v, f"{place}[{i}]", out, source) for i, v in enumerate(value)]
            return value if all(a is b for a, b in zip(new, value, strict=True)) else new
        if isinstance(value, dict):
            changed = {k: self.value(v, f"{place}.{k}", out, source) for k, v in value.items()
                       if k not in ("ref", "type", "mime_type")}
            if all(changed[k] is value[k] for k in changed):
                return value
            return {k: changed.get(k, v) for k, v in value.items()}
        return value

    def json_text(self, text: str | None, place: str, out: list[Finding],
                  source: str | None = None) -> str | None:
        """A stored JSON text with its strings scanned (re-dumped only when changed)."""
        if not text or not self._candidates(text):
            return text
        try:
            data = json.loads(text)
        except ValueError:
            return self.text(text, place, out, source)
        new = self.value(data, place, out, source)
        return text if new is data else json.dumps(new, ensure_ascii=False)


def findings_summary(findings: Iterable[Finding]) -> dict[str, int]:
    """How many findings of each kind."""
    out: dict[str, int] = {}
    for f in findings:
        out[f.kind] = out.get(f.kind, 0) + 1
    return out

