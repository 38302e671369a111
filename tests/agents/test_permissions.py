"""Personas and permissions: the allow / deny / approve table, exhaustively, and how a
persona is stored, updated and bound to a session (both backends)."""

from __future__ import annotations

import itertools

import pytest

from loomdb import InvalidInput, Loom, NotFound
from loomdb.agents.identities import (
    Persona,
    add_agent,
    agents,
    bind_session,
    binding,
    get_persona,
    set_persona,
)
from loomdb.agents.permissions import decide

LISTS = ((), ("t",), ("other",), ("*",))


def expected(allow: tuple[str, ...], deny: tuple[str, ...], approve: tuple[str, ...]) -> str:
    """The rule as the issue states it, written independently of the code."""
    denied = "t" in deny or "*" in deny
    allowed = not allow or "t" in allow or "*" in allow
    if denied or not allowed:
        return "deny"
    return "approve" if ("t" in approve or "*" in approve) else "run"


@pytest.mark.parametrize(("allow", "deny", "approve"), list(itertools.product(LISTS, repeat=3)))
def test_every_combination_of_allow_deny_and_approve(allow, deny, approve) -> None:
    persona = Persona("p", allow=allow, deny=deny, approve=approve)
    assert decide(persona, "t") == expected(allow, deny, approve)


def test_the_table_has_each_outcome_and_deny_wins_over_allow_and_approve() -> None:
    outcomes = {expected(*c) for c in itertools.product(LISTS, repeat=3)}
    assert outcomes == {"run", "deny", "approve"}
    assert decide(Persona("p", allow=("t",), deny=("t",), approve=("t",)), "t") == "deny"
    assert decide(None, "anything") == "run"


def test_a_persona_is_stored_updated_and_bound_to_a_session(loom: Loom) -> None:
    set_persona(loom, "writer", system="You write.", model="local", params={"temperature": 0},
                allow=["a", "b"], deny=["b"], approve=["a"])
    updated = set_persona(loom, "writer", params={"top_k": 5}, deny=[])
    assert updated == get_persona(loom, "writer")
    assert updated.to_json() == {
        "name": "writer", "system": "You write.", "model": "local",
        "params": {"temperature": 0, "top_k": 5}, "allow": ["a", "b"], "deny": [],
        "approve": ["a"]}
    loom.new_tree("hi", session="s")
    add_agent(loom, "ann", "human", persona="writer")
    bind_session(loom, "s", persona="writer", agent="ann")
    assert binding(loom, "s").persona == "writer" and binding(loom, "s").agent == "ann"
    assert [a.name for a in agents(loom)] == ["ann"]


def test_bad_names_and_unknown_things_are_typed_errors_and_write_nothing(loom: Loom) -> None:
    with pytest.raises(NotFound):
        get_persona(loom, "ghost")
    with pytest.raises(InvalidInput):
        add_agent(loom, "bob", "robot")
    with pytest.raises(NotFound):
        add_agent(loom, "bob", "model", persona="ghost")
    with pytest.raises(InvalidInput):
        set_persona(loom, "p", allow=[""])
    loom.new_tree("hi", session="s")
    with pytest.raises(NotFound):
        bind_session(loom, "s", persona="ghost")
    assert agents(loom) == [] and binding(loom, "s").persona is None
    add_agent(loom, "bob", "model")
    with pytest.raises(InvalidInput):
        add_agent(loom, "bob", "model")
