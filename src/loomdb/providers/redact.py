"""Secrets of a model endpoint never leave in a message, a log line or a record.

A `base_url` may carry credentials: `https://user:password@host/v1`, or a key in the
query (`?key=...`, `?api-key=...`); an API key goes in the Authorization header. The
SDKs and their HTTP library put the URL into their errors ("cannot reach ...", "for url
...") and their log lines. So every client registers its endpoint's secrets here when
it is made, and

* `shown_url` is the URL as loomdb writes it anywhere: no userinfo, every query value
  masked;
* `scrub` masks every registered secret in a text: each ProviderError's message passes
  through it (`base.provider_error`), whatever the SDK put in it;
* the SDKs' and HTTP libraries' loggers get a filter that does the same to each record.

Provenance holds the request body and the response, never the URL or a header.
"""

from __future__ import annotations

import logging
import threading
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit, urlunsplit

MASK = "***"
#: shorter values are not worth masking (and would mask ordinary words)
_MIN = 4
_secrets: set[str] = set()
_lock = threading.Lock()
_LOGGERS = ("httpx", "httpcore", "openai", "anthropic")


def shown_url(url: str | None) -> str:
    """`url` without its userinfo and with every query value masked."""
    if not url:
        return "the provider's default endpoint"
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return MASK
    netloc = (f"{MASK}@" if parts.username or parts.password else "") + (
        f"[{host}]" if ":" in host else host) + (f":{port}" if port else "")
    query = "&".join(f"{k}={MASK}" for k, _ in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def register(url: str | None, key: str | None = None) -> None:
    """Remember the secrets of one endpoint: its userinfo, query values and API key."""
    found: list[str | None] = [key]
    if url:
        try:
            parts = urlsplit(url)
            found += [parts.username, parts.password]
            found += [v for _, v in parse_qsl(parts.query, keep_blank_values=True)]
        except ValueError:
            found.append(url)  # a URL that does not parse: mask all of it
    new = {s for s in found if s and len(s) >= _MIN}
    if new - _secrets:
        with _lock:
            _secrets.update(new)
        _install_filter()


def scrub(text: str) -> str:
    """`text` with every registered secret (as given, or URL-encoded) masked."""
    if not _secrets:
        return text
    for secret in sorted(_secrets, key=len, reverse=True):
        for form in {secret, quote(secret, safe=""), quote_plus(secret)}:
            if form in text:
                text = text.replace(form, MASK)
    return text


class _Scrubbing(logging.Filter):
    """Masks registered secrets in every record of the loggers it is on."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = scrub(message)
        if clean != message:
            record.msg, record.args = clean, ()
        return True


_FILTER = _Scrubbing()


def _install_filter() -> None:
    """The filter on every logger of the SDKs and their HTTP libraries (a logger's
    filters see only its own records, so each one, children included: they exist once
    the SDK is imported, which making a client has done)."""
    names = [n for n in list(logging.root.manager.loggerDict) if n.startswith(_LOGGERS)]
    for name in {*_LOGGERS, *names}:
        log = logging.getLogger(name)
        if _FILTER not in log.filters:
            log.addFilter(_FILTER)


__all__ = ["MASK", "register", "scrub", "shown_url"]
