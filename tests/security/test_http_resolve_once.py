"""A name is resolved once over HTTP, against what the caller sees (issue 22, item 3).

The attack: a user makes a session named like a prefix of another user's node id (a
ref name wins over an id prefix; ULID prefixes are creation times), calls a route with
that name, and deletes the session between the route's access check and the
operation. When the operation resolves the name a second time, the prefix now names
the other user's node. A hook on the served Loom runs the attacker's step (deleting the
session) exactly after the name's first resolution returns, so the interleaving is the
same on every run. Here it must change nothing: the route fails as unknown, and the
other user's tree is as it was. On the main this was written against, each of these
reached the other user's tree (wrote into it, read it, linked from it).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from live import client, must

from loomdb import Loom
from loomdb.references import service as R
from loomdb.users import add_user

SECRET = "the victim's secret plan"


@dataclass
class Scene:
    loom: Loom
    base: str
    victim: str  # token
    attacker: str
    victim_node: str
    victim_tree: str
    attacker_node: str
    bait: str  # the attacker's session, named as a prefix of the victim's node

    def http(self, token: str) -> httpx.Client:
        return client(self.base, token)


@pytest.fixture
def scene(served: tuple[Loom, str], tag: str) -> Scene:
    lm, base = served
    _, victim = add_user(lm, f"victim-{tag}")
    _, attacker = add_user(lm, f"attacker-{tag}")
    with client(base, victim) as v:
        made = must(v.post("/api/trees", json={"text": SECRET, "session": f"v-{tag}"}), 201)
    with client(base, attacker) as a:
        mine = must(a.post("/api/trees", json={"text": "hello", "session": f"a-{tag}"}), 201)
        bait = made["node"][:20]
        must(a.post("/api/refs", json={"name": bait, "kind": "session", "at": f"a-{tag}"}),
             201)
    return Scene(lm, base, victim, attacker, made["node"], made["tree"], mine["node"], bait)


@pytest.fixture
def race(scene: Scene, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """After the bait's first resolution returns, the attacker deletes the bait session
    (their own ref): exactly between a route's check and its operation."""
    fired: list[str] = []
    real = scene.loom.resolve

    def resolve(headish: str, *args: Any, **kwargs: Any) -> Any:
        pos = real(headish, *args, **kwargs)
        if headish == scene.bait and not fired:
            fired.append(headish)
            scene.loom.delete_ref(scene.bait)
        return pos

    monkeypatch.setattr(scene.loom, "resolve", resolve)
    yield fired
    assert fired, "the attacker's step never ran: the test did not test the race"


def victim_nodes(scene: Scene) -> list[str]:
    return sorted(n.id for n in scene.loom.tree_nodes(scene.victim_tree))


def test_append_through_a_deleted_bait_writes_nothing_anywhere(scene: Scene,
                                                               race: list[str]) -> None:
    before = victim_nodes(scene)
    with scene.http(scene.attacker) as a:
        r = a.post(f"/api/nodes/{quote(scene.bait, safe='')}/append",
                   json={"role": "user", "text": "written by the attacker"})
    assert r.status_code == 404, r.text
    assert victim_nodes(scene) == before


def test_buffer_read_through_a_deleted_bait_reads_only_the_callers(scene: Scene,
                                                                   race: list[str]) -> None:
    with scene.http(scene.attacker) as a:
        r = a.get(f"/api/buffer/{quote(scene.bait, safe='')}")
    assert SECRET not in r.text
    assert r.status_code in (200, 404), r.text


def test_link_from_a_deleted_bait_does_not_touch_the_victims_node(
        scene: Scene, race: list[str], tag: str) -> None:
    with scene.http(scene.attacker) as a:
        other = must(a.post(f"/api/nodes/a-{tag}/append", json={"role": "user", "text": "2"}),
                     201)["node"]
        r = a.post("/api/links", json={"from": scene.bait, "to": other})
    assert r.status_code in (201, 404), r.text
    assert SECRET not in r.text
    froms = {x["from"] for x in R.backlinks(scene.loom, other)}
    assert scene.victim_node not in froms


def test_an_id_prefix_matches_only_the_callers_own_nodes(scene: Scene) -> None:
    """A prefix shared by the caller's node and another user's names the caller's: the
    lookup never sees the other's (no ambiguity to learn from, no reach)."""
    common = 0
    while scene.victim_node[common] == scene.attacker_node[common]:
        common += 1
    assert common >= 6, "both nodes are made within the same second"
    shared = scene.attacker_node[:common]
    with scene.http(scene.attacker) as a:
        assert must(a.get(f"/api/nodes/{shared}"))["id"] == scene.attacker_node
        hidden = a.get(f"/api/nodes/{scene.victim_node[:common + 1]}")
        assert hidden.status_code == 404 and SECRET not in hidden.text
    with scene.http(scene.victim) as v:
        assert must(v.get(f"/api/nodes/{shared}"))["id"] == scene.victim_node


def test_the_owner_still_appends_through_a_session(scene: Scene, tag: str) -> None:
    """The fix keeps a session moving: an append through it moves it, twice in a row."""
    with scene.http(scene.victim) as v:
        one = must(v.post(f"/api/nodes/v-{tag}/append", json={"role": "user", "text": "1"}),
                   201)["node"]
        two = must(v.post(f"/api/nodes/v-{tag}/append", json={"role": "user", "text": "2"}),
                   201)["node"]
        assert must(v.get(f"/api/refs/v-{tag}"))["node"] == two
        assert must(v.get(f"/api/nodes/{two}"))["parent"] == one
