"""Names sort the same on both backends, whatever the PostgreSQL database's collation.

SQLite compares text byte by byte; PostgreSQL by the database's default collation
unless a column says `COLLATE "C"`, and a cluster made with a language's locale
(en_US.UTF-8, ICU) sorts "alpha" before "Beta". Every list of names an area gives
(collections, tags and fields, documents and branches, agents, personas, users) is
read here from SQLite and from a PostgreSQL database whose default collation is ICU's
root locale, and must come back in byte order on both.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import loomdb
from loomdb import Loom
from loomdb.agents.identities import add_agent, agents, personas, set_persona
from loomdb.collections import lookup as K
from loomdb.collections import service as C
from loomdb.documents import DOCUMENTS
from loomdb.documents import service as D
from loomdb.documents import storage as DS
from loomdb.users.accounts import add_user, list_users

BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]
#: byte order and a language's order disagree on these
NAMES = ["gamma", "Beta", "alpha", "Zeta", "delta-2", "Delta"]
#: a database whose default collation orders like a language, as en_US.UTF-8 does
ICU = "LOCALE_PROVIDER icu ICU_LOCALE 'und' LOCALE 'C.UTF-8'"


@pytest.fixture(params=[
    "sqlite",
    pytest.param("postgres", marks=[pytest.mark.postgres, pytest.mark.skipif(
        "postgres" not in BACKENDS, reason="PostgreSQL is not among LOOMDB_TEST_BACKENDS")]),
])
def icu_loom(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Loom]:
    if request.param == "sqlite":
        with loomdb.open(str(tmp_path / "store")) as lm:
            yield lm
        return
    from pg import fresh_postgres_url

    with fresh_postgres_url(ICU) as url, loomdb.open(
            f"{url}?blobs=file://{tmp_path / 'blobs'}") as lm:
        yield lm


def test_the_icu_database_orders_like_a_language() -> None:
    """The PostgreSQL side of this file tests something: its default collation puts
    "alpha" before "Beta", where byte order puts it after."""
    if "postgres" not in BACKENDS:
        pytest.skip("PostgreSQL is not among LOOMDB_TEST_BACKENDS")
    import psycopg

    from pg import fresh_postgres_url

    with fresh_postgres_url(ICU) as url, psycopg.connect(url) as conn:
        row = conn.execute("SELECT 'alpha' < 'Beta', 'alpha' < 'Beta' COLLATE \"C\"").fetchone()
    assert row == (True, False)


def test_names_come_back_in_byte_order(icu_loom: Loom) -> None:
    lm = icu_loom
    for name in NAMES:
        C.new(lm, name)
        D.new(lm, name, f"text of {name}")
        add_agent(lm, name, "human")
        set_persona(lm, name, system=f"you are {name}")
        add_user(lm, name.lower() + "-user" if name.islower() else name + "-User")
    _, root = lm.new_tree("hi")
    item = C.add(lm, "alpha", root.id, tags=NAMES, fields={n: "v" for n in NAMES})
    for name in NAMES:
        D.branch(lm, "alpha", name)

    expect = sorted(NAMES)  # code point order: what SQLite's byte order gives
    assert expect[:2] == ["Beta", "Delta"]
    assert [c.name for c in K.collections(lm)] == expect
    assert [d["document"] for d in D.documents(lm)] == expect
    assert [a.name for a in agents(lm)] == expect
    assert [p.name for p in personas(lm)] == expect
    users = [u.name for u in list_users(lm)]
    assert users == sorted(users) and len(users) == len(NAMES)
    assert C.item_tags(lm, item.id) == expect
    shown = C.show(lm, "alpha")["items"][0]
    assert list(shown["tags"]) == expect and list(shown["fields"]) == expect
    with lm.unit(DOCUMENTS) as db:
        doc = DS.document(db, "alpha")
        assert doc is not None
        assert [b for b in DS.branches(db, doc.id) if b in NAMES] == expect
