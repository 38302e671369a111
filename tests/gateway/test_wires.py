"""The wires the gateway speaks (docs/architecture.md, "Add a wire format"): each is a
module with parse / answer / Chunks and a NAME, answers on its route, and has a fixture
of its real client's request (tests/fixtures/wires/<name>/) that parses to the messages
pinned beside it. A wire added without its fixture, or a fixture without its wire,
fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loomdb.exchanges.exchange import Gateway
from loomdb.exchanges.wires import WIRES, wire
from loomdb.providers.config import parse_config

FIXTURES = Path(__file__).parents[1] / "fixtures" / "wires"


def test_every_wire_has_its_parts_its_route_and_its_fixture() -> None:
    from loomdb.gateway.app import create_gateway_app  # noqa: F401 - the routes' module

    assert sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()) == sorted(WIRES)
    routes = (Path(__file__).parents[2] / "src/loomdb/gateway/app.py").read_text()
    for name, (_, route) in WIRES.items():
        module = wire(name)
        assert module.NAME == name
        assert callable(module.parse) and callable(module.answer) and module.Chunks
        assert f'"{route}"' in routes
        assert (FIXTURES / name / "request.json").is_file()
        assert (FIXTURES / name / "expected.json").is_file()


@pytest.mark.parametrize("name", sorted(WIRES))
def test_a_real_clients_request_parses_to_the_pinned_messages(name: str, tmp_path: Path) -> None:
    import loomdb
    from loomdb.settings import Settings

    body = json.loads((FIXTURES / name / "request.json").read_text(encoding="utf-8"))
    config = parse_config({"server": {"names": {"*": "local"}}})
    with loomdb.open(str(tmp_path / "s"), settings=Settings()) as lm:
        ex = wire(name).parse(Gateway(lm, config=config), body)
        got = [{"role": m.role, "content": m.blocks} for m in ex.msgs]
        expected = json.loads((FIXTURES / name / "expected.json").read_text(encoding="utf-8"))
        assert got == expected
        assert ex.spec.name == "local" and ex.model == body["model"]
        assert len(ex.digests.keys) == len(got)


def test_serve_mounts_every_wire_under_v1(tmp_path: Path) -> None:
    import sys

    import httpx

    import loomdb
    from loomdb.server import create_app
    from loomdb.settings import Settings

    sys.path.insert(0, str(Path(__file__).parents[1] / "server"))
    from live import serving

    routes = [route for _, route in WIRES.values()] + ["/v1/messages/count_tokens"]
    with loomdb.open(str(tmp_path / "s"), settings=Settings()) as lm:
        with serving(create_app(lm)) as base, httpx.Client(base_url=base, timeout=60) as http:
            for route in routes:  # mounted: a bad body is the wire's 400, not a 404
                bad = http.post(route, content=b"{not json",
                                headers={"content-type": "application/json"})
                assert bad.status_code == 400, (route, bad.text)
            listed = http.get("/v1/models", headers={"anthropic-version": "2023-06-01"})
            assert listed.json()["data"][0]["type"] == "model"
