"""The agents' inbox (`#/inbox`) in Chromium over each backend: a tool call the local
model wrote waits with its input shown; Approve runs it once and the resumed turn's
steps appear; a turn run elsewhere streams into the page as its steps commit; Amend
runs it with the person's input; Deny (with a reason) never runs it; proposed messages are approved, amended or denied;
personas show their rules."""

from __future__ import annotations

from typing import Any

import pytest
from agent_calls import PERSONA, Tally, pause, tally_world

from loomdb import Loom
from loomdb.agents.approvals import approve

pytestmark = [pytest.mark.xdist_group("local-model"), pytest.mark.slow]


world = tally_world("inbox")


@pytest.fixture(scope="module")
def served(world: tuple[str, Loom, str, Tally]) -> tuple[Loom, str]:
    return world[1], world[2]


@pytest.fixture
def tally(world: tuple[str, Loom, str, Tally]) -> Tally:
    return world[3]


def test_approve_runs_the_call_once_and_the_turn_shows_its_steps(
        page: Any, served: tuple[Loom, str], tally: Tally, name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    node = pause(lm, tally, name)
    page.goto("/#/inbox")
    call = page.get_by_role("article", name=f"Call tally in {name}")
    expect(call).to_be_visible()
    expect(call.get_by_label("Input of tally")).to_contain_text('"what": "visit"')
    expect(call).to_contain_text(f"persona {PERSONA}")
    before = tally.runs()
    call.get_by_role("button", name="Approve", exact=True).click()
    turn = page.get_by_role("region", name="Turn")
    steps = turn.get_by_role("list", name="Steps").get_by_role("listitem")
    expect(steps).to_have_count(2)
    expect(steps.nth(0)).to_contain_text('tally {"what":"visit"}')
    expect(steps.nth(1)).to_contain_text(f"tally: {before + 1}")
    expect(page.get_by_role("status").filter(has_text="Approved")).to_contain_text(
        "step limit")
    expect(call).to_have_count(0)
    assert tally.runs() == before + 1
    assert lm.node(name).parent == node


def test_a_turn_run_elsewhere_streams_into_the_page(
        page: Any, served: tuple[Loom, str], tally: Tally, name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    node = pause(lm, tally, name)
    page.goto(f"/#/inbox?turn={node}")
    turn = page.get_by_role("region", name="Turn")
    expect(turn.get_by_role("status")).to_have_text("Waiting for approval · 1 step")
    approve(lm, node, tools=tally.config)  # as `loomdb approve` would, in another process
    expect(turn.get_by_role("status")).to_contain_text("2 steps")
    expect(turn.get_by_role("listitem").nth(1)).to_contain_text("result")


def test_deny_with_a_reason_never_runs_the_tool(
        page: Any, served: tuple[Loom, str], tally: Tally, name: str) -> None:
    from playwright.sync_api import expect

    pause(served[0], tally, name)
    before = tally.runs()
    page.goto("/#/inbox")
    call = page.get_by_role("article", name=f"Call tally in {name}")
    call.get_by_label("Reason").fill("not on a Sunday")
    call.get_by_role("button", name="Deny", exact=True).click()
    steps = page.get_by_role("region", name="Turn").get_by_role("listitem")
    expect(steps).to_have_count(2)
    expect(steps.nth(1)).to_contain_text("refused")
    expect(steps.nth(1)).to_contain_text("denied: not on a Sunday")
    expect(page.get_by_role("status").filter(has_text="Denied")).to_be_visible()
    assert tally.runs() == before


def test_an_amended_call_runs_with_the_persons_input(
        page: Any, served: tuple[Loom, str], tally: Tally, name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    node = pause(lm, tally, name)
    before = tally.runs()
    page.goto("/#/inbox")
    call = page.get_by_role("article", name=f"Call tally in {name}")
    call.get_by_role("button", name="Amend").click()
    form = call.get_by_role("form", name="Amend tally")
    form.get_by_label("Amended input of tally").fill("not json")
    form.get_by_role("button", name="Run amended").click()
    expect(form.get_by_role("alert")).to_have_text("The input of tally is not JSON.")
    form.get_by_label("Amended input of tally").fill('{"what": "a visit by hand"}')
    form.get_by_role("button", name="Run amended").click()
    steps = page.get_by_role("region", name="Turn").get_by_role("listitem")
    expect(steps).to_have_count(2)
    expect(steps.nth(0)).to_contain_text('tally {"what":"a visit by hand"}')
    expect(steps.nth(0)).to_contain_text("amended by")
    expect(page.get_by_role("status").filter(has_text="Amended")).to_be_visible()
    assert tally.runs() == before + 1
    assert "a visit by hand" in tally.file.read_text().splitlines()[-1]
    assert lm.node(lm.node(name).parent).edited_from == node


def test_messages_are_approved_amended_and_denied(
        page: Any, served: tuple[Loom, str], name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    source, target = f"{name}-a", f"{name}-b"
    lm.new_tree("I gather facts.", session=source)
    lm.new_tree("I write reports.", session=target)
    lm.agents.propose(source, target, "Fact one: water is wet.")
    lm.agents.propose(source, target, "Fact two: fire is cold.")
    lm.agents.propose(source, target, "Click this link.")
    page.goto("/#/inbox")
    cards = page.get_by_role("article", name=f"Message from {source} to {target}")
    expect(cards).to_have_count(3)
    cards.filter(has_text="water").get_by_role("button", name="Approve", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Delivered")).to_be_visible()
    expect(cards).to_have_count(2)
    assert lm.node(target).content[0]["text"] == "Fact one: water is wet."

    cards.filter(has_text="fire").get_by_role("button", name="Amend").click()
    form = page.get_by_role("form", name="Amend the message")
    form.get_by_label("Amended text").fill("Fact two: fire is hot.")
    form.get_by_role("button", name="Send amended").click()
    expect(page.get_by_role("status").filter(has_text="Delivered amended")).to_be_visible()
    expect(cards).to_have_count(1)
    assert lm.node(target).content[0]["text"] == "Fact two: fire is hot."

    cards.get_by_label("Reason").fill("spam")
    cards.get_by_role("button", name="Deny", exact=True).click()
    expect(cards).to_have_count(0)
    assert lm.node(target).content[0]["text"] == "Fact two: fire is hot."
    expect(page.get_by_text("No message between sessions is waiting.")).to_be_visible()


def test_personas_show_their_rules(page: Any, served: tuple[Loom, str], name: str) -> None:
    from playwright.sync_api import expect

    served[0].agents.set_persona(name, system="Answer in one line.", deny=["shell"],
                                 approve=["tally"])
    page.goto("/#/inbox")
    persona = page.get_by_role("listitem", name=f"Persona {name}")
    expect(persona).to_contain_text("Answer in one line.")
    expect(persona).to_contain_text("Allowed toolsevery tool")
    expect(persona).to_contain_text("Denied toolsshell")
    expect(persona).to_contain_text("Need approvaltally")


def test_a_call_made_elsewhere_appears_without_a_reload(
        page: Any, served: tuple[Loom, str], tally: Tally, name: str) -> None:
    from playwright.sync_api import expect

    page.goto("/#/inbox")
    expect(page.get_by_role("heading", name="Tool calls waiting")).to_be_visible()
    call = page.get_by_role("article", name=f"Call tally in {name}")
    expect(call).to_have_count(0)
    pause(served[0], tally, name)  # an agent's turn elsewhere stops for approval
    expect(call).to_be_visible()
    served[0].agents.propose(*_two_sessions(served[0], name), "Hello from elsewhere.")
    expect(page.get_by_role("article", name=f"Message from {name}-x to {name}-y")).to_be_visible()


def _two_sessions(lm: Loom, name: str) -> tuple[str, str]:
    lm.new_tree("One.", session=f"{name}-x")
    lm.new_tree("Two.", session=f"{name}-y")
    return f"{name}-x", f"{name}-y"
