"""What the scanner looks for: loomdb's own rules, one per kind of secret.

Each rule names a kind (the marker a redaction leaves is `[redacted:<kind>]`), a
pattern, and the group that is the secret itself (0: the whole match; a header or an
assignment keeps its name, a URL its user and host, only the secret goes). The rules
are written for what an agent transcript holds often: provider API keys pasted into a
prompt or printed by `env`, cloud and forge tokens in a tool's output, private keys
read by `cat`, JWTs in `curl` lines, DSNs with a password in a config file.

A rule is kept narrow on purpose: a scanner that flags ordinary prose is turned off.
Every rule has literals one of which its matches must contain (`needles`): a rule
runs only on a text holding one (a substring test), so a plain-text turn costs a
few dozen substring tests and no regular expression at all.

Adding a rule: an `_r(kind, needles, pattern, group)` in `RULES` below, a planted
sample in tests/test_secrets.py, and a line in docs/security.md. An operator adds
rules without a release through the store's settings (`loomdb secrets --rule`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One kind of secret: `needles` (literals one of which every match contains: a
    text holding none is not searched; `fold`: looked for in the lower-cased text),
    `regex` (`pattern` compiled, on the first text that holds a needle: most runs
    never need most rules), and the `group` of the pattern that is the secret."""

    kind: str
    needles: tuple[str, ...]
    regex: str
    group: int = 0
    fold: bool = False
    #: a last test of the secret group, given the text and the group's span (entropy:
    #: its context and its randomness): a match it refuses is no finding
    check: Callable[[str, int, int], bool] | None = None
    #: for a rule without needles, a cheap test a text must pass before the pattern runs
    gate: Callable[[str], bool] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.regex)  # (compiled once: `re` keeps what it compiled)


def _r(kind: str, needles: str, pattern: str, group: int = 0, fold: bool = False,
       check: Callable[[str, int, int], bool] | None = None,
       gate: Callable[[str], bool] | None = None) -> Rule:
    return Rule(kind, tuple(needles.split()), pattern, group, fold, check, gate)


#: the kind entropy alone finds: no name says what it is, so its default is `warn`
ENTROPY = "high-entropy-string"
#: bits per character from which a token reads as random (a random base64 string of
#: 24-128 characters has 4.4-6.0; English words run together and identifiers stay under
#: 4.0; lower-case hex, UUIDs and hashes, which an agent session is full of, are never
#: looked at: the check asks for upper case, lower case and digits)
ENTROPY_BITS = 4.3


def shannon_bits(text: str) -> float:
    """Shannon entropy of `text` in bits per character."""
    n = len(text)
    counts: dict[str, int] = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(c / n * math.log2(c / n) for c in counts.values())


#: ids that look random and are not secrets (nor are paths: a token that starts with
#: a slash or holds three): tool-call, message, response and request
#: ids of the providers' APIs, which agent transcripts quote everywhere
_ID_PREFIX = re.compile(r"(?:toolu|srvtoolu|call|msg|resp|fc|rs|chatcmpl|req|run|thread|asst"
                        r"|file|batch|evt|ws|item|conv)[_-]")


def _long_word(text: str) -> bool:
    """Whether `text` has a run of 24 characters without white space (a token the
    entropy rule could take must be one): a split, no regular expression."""
    return len(text) >= 24 and any(len(w) >= 24 for w in text.split())


#: what may stand before a token the entropy rule takes, unless it is quoted: a name that
#: says it holds a secret, and `=` or `:` (searched only in the 48 characters before)
_ASSIGNED = re.compile(r"(?i:key|token|secret|passw\w*|auth\w*|cred\w*)[\"']?\s*[=:]\s*[\"']?$")


def _random_looking(text: str, start: int, end: int) -> bool:
    """A token, quoted or assigned to a secret's name, that reads as random."""
    if not (start and text[start - 1] in "\"'"):
        # assigned: `=` or `:` just before (spaces and a quote between), then the name
        before = text[max(0, start - 4):start].rstrip(" \t\"'")
        if not before or before[-1] not in "=:" or not _ASSIGNED.search(
                text, max(0, start - 48), start):
            return False
    token = text[start:end]
    return (not _ID_PREFIX.match(token) and not token.startswith("/")
            and token.count("/") < 3 and any(c.isdigit() for c in token)
            and any(c.isupper() for c in token) and any(c.islower() for c in token) and shannon_bits(token) >= ENTROPY_BITS)


_B64 = r"[A-Za-z0-9+/]"
#: passwords in URLs and assignments that are placeholders, not secrets
PLACEHOLDER = re.compile(
    r"^(?:\*+|x+|\.+|<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{.*\}\}|%\(?\w+\)?s?|"
    r"(?i:password|passwd|pass|secret|changeme|example|redacted|your[_-]?password|"
    r"user|username|pw|pwd|test|\[redacted:[a-z0-9-]+\]))$")

RULES: tuple[Rule, ...] = (
    _r("private-key", "PRIVATE",
       r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
       r"(?:[\s\S]{0,20000}?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
       r"|(?:[A-Za-z0-9+/=:,\- \t\r\n]|\\[nrt])*)"),
    _r("anthropic-api-key", "sk-ant-", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    _r("openai-api-key", "sk-",
       r"\bsk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}"
       r"|(?=[A-Za-z]*[0-9])(?=[0-9]*[A-Za-z])[A-Za-z0-9]{32,}(?:T3BlbkFJ[A-Za-z0-9]{20,})?)\b"),
    _r("aws-access-key", "AKIA ASIA", r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
    _r("aws-secret-key", "secret",
       r"(?i:aws_?secret_?access_?key|secretaccesskey)(?:\\*[\"'])?\s*[=:]\s*(?:\\*[\"'])?"
       rf"({_B64}{{40}})(?!{_B64})", 1, fold=True),
    _r("github-token", "ghp_ gho_ ghu_ ghs_ ghr_ github_pat_",
       r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
    _r("gitlab-token", "glpat-", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    _r("slack-token", "xox", r"\bxox[abposre]-[A-Za-z0-9-]{10,}"),
    _r("slack-webhook", "hooks.slack.com",
       r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}"),
    _r("stripe-key", "_live_ _test_", r"\b(?:sk|rk|whsec)_(?:live|test)_[A-Za-z0-9]{16,}"),
    _r("google-api-key", "AIza", r"\bAIza[0-9A-Za-z_-]{35}"),
    _r("jwt", "eyJ", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    _r("sendgrid-key", "SG.", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b"),
    _r("twilio-key", "SK", r"\bSK[0-9a-f]{32}\b"),
    _r("npm-token", "npm_", r"\bnpm_[A-Za-z0-9]{36}\b"),
    _r("huggingface-token", "hf_", r"\bhf_[A-Za-z0-9]{34,}\b"),
    _r("azure-storage-key", "AccountKey=", rf"AccountKey=({_B64}{{80,100}}=*)", 1),
    _r("telegram-bot-token", ":AA", r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])"),
    _r("password-in-url", "://",
       r"://[^\s:/@\"'<>\\]{1,128}:([^\s@/\"'<>\\]{1,256})@[A-Za-z0-9\[]", 1),
    _r("authorization-header", "authorization bearer",
       r"(?i:\b(?:authorization|proxy-authorization)(?:\\*[\"'])?\s*[:=]\s*(?:\\*[\"'])?"
       r"(?:bearer|basic|token|bot)\s+|\bbearer\s+)"
       r"([A-Za-z0-9._~+/-]{20,}=*)", 1, fold=True),
    _r("password-assignment", "passw pwd",
       r"(?i:(?:passw(?:or)?d|pwd)(?:\\*[\"'])?\s*[=:]\s*)(\\*[\"'])"
       r"([^\"'\s\\]{8,128})\1", 2, fold=True),
    # entropy alone (detect-secrets' idea, kept narrow): a quoted token, or the value
    # of a key/token/secret/password/auth/credential assignment, of 24-128 characters
    # of the base64 alphabets, mixed case with digits, at least ENTROPY_BITS per char
    # (the pattern finds long tokens alone, the check looks at what stands before one:
    # an alternation tried at every character cost a JSON-heavy import twice its time)
    _r(ENTROPY, "",
       r"(?<![A-Za-z0-9+/_-])([A-Za-z0-9+/_-]{24,128}={0,2})(?![A-Za-z0-9+/_=-])", 1,
       check=_random_looking, gate=_long_word),
)

#: the action a kind takes when the policy does not name it and its default is `redact`
#: (a finding of entropy alone is listed, not changed: a redaction must name a kind)
QUIET_KINDS = {ENTROPY: "warn"}
