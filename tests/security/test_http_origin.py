"""Cross-site reach into a store without users (issue 22, item 6), over a live server.

A store without users is served on loopback without a token, so any page the
operator's browser opens is a caller: a page whose DNS name rebinds to 127.0.0.1 (it
sends its own `Host`), a cross-site `fetch` (it sends its `Origin`), a plain HTML form
(it sends a form's content type, and no preflight asks first). Each is refused with one
line and nothing is written; the server's own page, and clients that are not browsers,
go on working. The standalone `loomdb gateway` app has the same protection. On the
main this was written against, each of these requests was served.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from live import client, serving

from loomdb import Loom
from loomdb.gateway import create_gateway_app
from loomdb.server import create_app

EVIL = "http://evil.example"


def trees(lm: Loom) -> int:
    return len(lm.trees())


def refused(r: httpx.Response, status: int) -> str:
    assert r.status_code == status, (r.status_code, r.text)
    error = r.json()["error"]
    assert "\n" not in error["message"]
    return str(error["message"])


def test_a_rebound_host_reads_nothing(served: tuple[Loom, str]) -> None:
    lm, base = served
    with client(base) as c:
        c.post("/api/trees", json={"text": "private"}).raise_for_status()
        for path in ("/api/trees", "/", "/api/refs", "/openapi.json"):
            refused(c.get(path, headers={"host": "evil.example"}), 400)
            refused(c.get(path, headers={"host": "evil.example:8000"}), 400)
        assert c.get("/api/trees", headers={"host": "localhost"}).status_code == 200


def test_a_cross_site_write_is_refused_and_writes_nothing(served: tuple[Loom, str]) -> None:
    lm, base = served
    before = trees(lm)
    with client(base) as c:
        refused(c.post("/api/trees", json={"text": "x"}, headers={"origin": EVIL}), 403)
        refused(c.post("/api/trees", json={"text": "x"}, headers={"origin": "null"}), 403)
        # another server on this machine is another site
        other = base.rsplit(":", 1)[0] + ":1"
        refused(c.post("/api/trees", json={"text": "x"}, headers={"origin": other}), 403)
        refused(c.post("/api/trees", json={"text": "x"},
                       headers={"sec-fetch-site": "cross-site"}), 403)
        refused(c.post("/api/gc", headers={"origin": EVIL}), 403)
        refused(c.delete("/api/refs/anything", headers={"origin": EVIL}), 403)
    assert trees(lm) == before


def test_what_a_plain_form_can_send_is_refused(served: tuple[Loom, str]) -> None:
    """A form posts urlencoded, multipart or text/plain, without Origin checks on old
    browsers and without any preflight: no state-changing route takes those."""
    lm, base = served
    before = trees(lm)
    body = json.dumps({"text": "posted by a form"})
    with client(base) as c:
        refused(c.post("/api/trees", content=body, headers={"content-type": "text/plain"}),
                415)
        refused(c.post("/api/trees", data={"text": "x"}), 415)  # urlencoded
        native = c.get("/api/trees").json()
        refused(c.post("/api/import", files={"file": ("a.json", json.dumps(native))}), 415)
        refused(c.post("/api/import", content=b"[]",
                       headers={"content-type": "application/json"}), 415)
        # an empty form post once ran gc
        refused(c.post("/api/gc", content=b"",
                       headers={"content-type": "application/x-www-form-urlencoded"}), 415)
        refused(c.post("/api/gc", content=b"x=1"), 415)  # a body needs a type
    assert trees(lm) == before


def test_the_page_and_plain_clients_still_write(served: tuple[Loom, str]) -> None:
    """Same origin (what the page sends), no Origin (curl, SDKs), and a bodiless POST."""
    lm, base = served
    host = base.removeprefix("http://")
    with client(base) as c:
        made = c.post("/api/trees", json={"text": "mine"}, headers={"origin": base})
        assert made.status_code == 201, made.text
        assert c.post("/api/trees", json={"text": "curl"}).status_code == 201
        assert c.post("/api/verify").status_code == 200
        same = c.post("/api/trees", json={"text": "x"},
                      headers={"origin": base, "sec-fetch-site": "same-origin", "host": host})
        assert same.status_code == 201, same.text


def test_allowed_hosts_are_the_operators_choice(served: tuple[Loom, str]) -> None:
    from loomdb.guard import Trust
    from loomdb.settings import Settings

    lm, _ = served
    trust = Trust.configured(
        "127.0.0.1", ["loom.example"],
        Settings.from_environ({"LOOMDB_ALLOW_HOSTS": "other.example, third.example"}), lm.limits,
        users=True)  # names are allowed only on a store with users (test_allow_hosts.py)
    with serving(create_app(lm, trust=trust)) as base, client(base) as c:
        for name in ("loom.example", "other.example", "third.example:443", "127.0.0.1"):
            assert c.get("/api/trees", headers={"host": name}).status_code == 200, name
        refused(c.get("/api/trees", headers={"host": "evil.example"}), 400)
        # a write from the allowed name's own pages passes
        ok = c.post("/api/trees", json={"text": "x"},
                    headers={"host": "loom.example", "origin": "https://loom.example"})
        assert ok.status_code == 201, ok.text
    assert Trust.serving("0.0.0.0").hosts == Trust().hosts  # binding all names none


@pytest.fixture
def gateway(served: tuple[Loom, str]) -> Iterator[str]:
    with serving(create_gateway_app(served[0])) as base:  # guarded by default
        yield base


def chat(c: httpx.Client, **headers: Any) -> httpx.Response:
    return c.post("/v1/chat/completions", headers=headers,
                  json={"model": "no-such-model", "messages": [{"role": "user", "content": "hi"}]})


def test_the_standalone_gateway_is_guarded_alike(served: tuple[Loom, str],
                                                 gateway: str) -> None:
    lm, _ = served
    before = trees(lm)
    with client(gateway) as c:
        refused(chat(c, origin=EVIL), 403)
        refused(chat(c, host="evil.example"), 400)
        refused(c.get("/v1/models", headers={"host": "evil.example"}), 400)
        refused(c.post("/v1/chat/completions", content=json.dumps({"model": "local"}),
                       headers={"content-type": "text/plain"}), 415)
        assert c.get("/v1/models").status_code == 200
    assert trees(lm) == before
