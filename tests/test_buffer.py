"""Buffer mode (seed 003): each resolved question Q1-Q7 as a named scenario, with the
real local model (SmolLM2-135M in-process) wherever a model writes."""

from __future__ import annotations

import json

import pytest

import loomdb
from helpers import row_counts
from loomdb import InvalidInput, Loom
from loomdb import buffer as B
from loomdb.content import plain_text
from loomdb.generation import generate_at

pytestmark = pytest.mark.xdist_group("local-model")

TOKENS = 6


def doc_tree(loom: Loom, text: str = "Once upon a time, ", session: str = "doc", **kw: object) -> str:
    _, root = loom.new_tree(text, mode="buffer", session=session, **kw)  # type: ignore[arg-type]
    return root.id


def path_text(loom: Loom, at: str) -> str:
    return "".join(plain_text(n.content) for n in loom.nodes(loom.path(at)))


def assert_covers(doc: B.Document) -> None:
    assert [s.start for s in doc.spans] == [0] + [s.end for s in doc.spans[:-1]]
    assert (doc.spans[-1].end if doc.spans else 0) == len(doc.text)
    assert "".join(s.text for s in doc.spans) == doc.text


def long_doc(loom: Loom, n: int, session: str = "doc") -> list[str]:
    """A buffer document of n nodes written by hand, alternating human / model authors."""
    ids = [doc_tree(loom, "p0 ", session=session)]
    for i in range(1, n):
        model = i % 2 == 1
        ids.append(loom.append(session, f"p{i} ", role="assistant" if model else "user",
                               source="agent" if model else "human",
                               author="local" if model else None).id)
    return ids


class TestQ1NodesAreMadeByGeneration:
    """Q1: the working buffer becomes a node when the user generates; each model
    response becomes its own node."""

    def test_q1_generate_commits_the_draft_then_adds_the_continuation(self, loom: Loom) -> None:
        root = doc_tree(loom)
        B.set_draft(loom, "doc", "there lived a ")
        B.append_draft(loom, "doc", "fox")
        assert loom.path("doc") == [root]  # the draft is not a node yet
        result = generate_at(loom, "doc", max_tokens=TOKENS)
        draft, answer = result.nodes
        assert (draft.role, draft.source, draft.author) == ("user", "human", loom.actor)
        assert plain_text(draft.content) == "there lived a fox"
        assert (answer.role, answer.source, answer.parent) == ("assistant", "agent", draft.id)
        assert loom.path("doc") == [root, draft.id, answer.id]
        assert loom.ref("doc").node == answer.id and result.moved
        assert B.get_draft(loom, "doc") == ""

    def test_q1_an_empty_draft_continues_from_the_head(self, loom: Loom) -> None:
        root = doc_tree(loom)
        result = B.generate(loom, "doc", n=2, max_tokens=TOKENS)
        assert len(result.nodes) == 2 and all(n.parent == root for n in result.nodes)
        assert loom.ref("doc").node == result.nodes[0].id

    def test_q1_the_draft_is_mutable_and_writes_no_node(self, loom: Loom) -> None:
        doc_tree(loom)
        before = row_counts(loom)["nodes"]
        B.set_draft(loom, "doc", "draft one")
        B.append_draft(loom, "doc", ", more")
        B.set_draft(loom, "doc", "draft two")
        assert B.get_draft(loom, "doc") == "draft two"
        assert row_counts(loom)["nodes"] == before
        assert B.document(loom, "doc").text == "Once upon a time, draft two"

    def test_q1_drafts_survive_a_restart_and_each_view_has_its_own(self, store_url: str) -> None:
        with loomdb.open(store_url) as lm:
            doc_tree(lm)
            lm.view("other", "doc")
            B.set_draft(lm, "doc", "mine")
            B.set_draft(lm, "other", "theirs")
        with loomdb.open(store_url) as lm:
            assert B.document(lm, "doc").text == "Once upon a time, mine"
            assert B.document(lm, "other").text == "Once upon a time, theirs"

    def test_q1_a_deleted_ref_takes_its_draft_with_it(self, loom: Loom) -> None:
        doc_tree(loom)
        loom.view("v", "doc")
        B.set_draft(loom, "v", "old draft")
        loom.delete_ref("v")
        loom.view("v", "doc")
        assert B.get_draft(loom, "v") == ""

    def test_q1_a_draft_needs_a_session_or_view(self, loom: Loom) -> None:
        root = doc_tree(loom)
        loom.append("doc", "more")
        loom.bookmark(root, "start")
        for where in (root, "doc~1", "start"):
            with pytest.raises(InvalidInput, match="session or view"):
                B.set_draft(loom, where, "x")
        assert B.document(loom, root).draft == ""  # reading any point is fine

    def test_q1_a_bad_model_writes_nothing_and_keeps_the_draft(self, loom: Loom) -> None:
        doc_tree(loom)
        B.set_draft(loom, "doc", "keep me")
        before = row_counts(loom)
        with pytest.raises(InvalidInput):
            B.generate(loom, "doc", models=["no-such-model"])
        with pytest.raises(InvalidInput, match="-n"):
            B.generate(loom, "doc", n=0)
        assert row_counts(loom) == before and B.get_draft(loom, "doc") == "keep me"

    def test_q1_commit_draft_without_generating(self, loom: Loom) -> None:
        root = doc_tree(loom)
        assert B.commit_draft(loom, "doc") is None
        B.set_draft(loom, "doc", "by hand")
        node = B.commit_draft(loom, "doc")
        assert node is not None and loom.path("doc") == [root, node.id]
        assert B.get_draft(loom, "doc") == ""

    def test_q1_generating_through_a_view_moves_the_view(self, loom: Loom) -> None:
        root = doc_tree(loom)
        loom.view("v", "doc")
        B.set_draft(loom, "v", "in the view ")
        result = B.generate(loom, "v", max_tokens=TOKENS)
        assert loom.ref("v").node == result.nodes[1].id and result.moved
        assert loom.ref("doc").node == root  # the session is another document

    def test_q1_buffer_operations_refuse_dialogue_trees(self, loom: Loom) -> None:
        loom.new_tree("hi", session="chat")
        with pytest.raises(InvalidInput, match="dialogue"):
            B.set_draft(loom, "chat", "x")


class TestQ2Authorship:
    """Q2: separate nodes, visual continuity: each node has one author; model text is
    coloured; the parts of an edited model node the human changed become human."""

    def test_q2_each_node_has_one_author_and_spans_cover_the_document(self, loom: Loom) -> None:
        doc_tree(loom)
        B.set_draft(loom, "doc", "a hare ")
        result = B.generate(loom, "doc", max_tokens=TOKENS)
        B.set_draft(loom, "doc", " The end.")
        doc = B.document(loom, "doc")
        assert_covers(doc)
        assert [p.node for p in doc.nodes] == loom.path("doc")
        by_node = {s.node: s for s in doc.spans}
        assert by_node[result.nodes[0].id].author == loom.actor
        model = by_node.get(result.nodes[1].id)
        if plain_text(result.nodes[1].content):
            assert model is not None and model.model and model.author == "local"
        assert doc.spans[-1].node is None and doc.spans[-1].text == " The end."

    def test_q2_human_edits_of_model_text_are_attributed_to_the_human(self, loom: Loom) -> None:
        doc_tree(loom, "Title. ")
        answer = loom.append("doc", "The quick brown fox jumps.", role="assistant",
                             source="agent", author="local")
        start = len("Title. The quick ")
        B.edit_span(loom, "doc", start, start + len("brown"), "red")
        doc = B.document(loom, "doc")
        assert_covers(doc)
        assert doc.text == "Title. The quick red fox jumps."
        version = loom.node("doc")
        assert version.edited_from == answer.id and version.author == loom.actor
        parts = [(s.text, s.author, s.model) for s in doc.spans if s.node == version.id]
        assert parts == [("The quick ", "local", True), ("red", loom.actor, False),
                         (" fox jumps.", "local", True)]
        assert {s.origin for s in doc.spans if s.model} == {answer.id}

    def test_q2_a_second_edit_is_diffed_against_the_original(self, loom: Loom) -> None:
        doc_tree(loom, "")
        loom.append("doc", "abc def ghi", role="assistant", source="agent", author="local")
        B.edit_span(loom, "doc", 0, 3, "XYZ")
        B.edit_span(loom, "doc", 8, 11, "UVW")
        doc = B.document(loom, "doc")
        assert doc.text == "XYZ def UVW"
        assert [(s.text, s.model) for s in doc.spans] == [
            ("XYZ", False), (" def ", True), ("UVW", False)]


class TestQ3Branching:
    """Q3: the branch point is the end of the document; N continuations become N
    sibling fragments (no copies); switching siblings switches the whole downstream."""

    def test_q3_n_continuations_are_siblings_under_the_committed_draft(self, loom: Loom) -> None:
        doc_tree(loom)
        B.set_draft(loom, "doc", "a dragon ")
        nodes_before = row_counts(loom)["nodes"]
        result = B.generate(loom, "doc", n=3, max_tokens=TOKENS)
        draft, *answers = result.nodes
        assert len(answers) == 3
        assert loom.children(draft.id) == [a.id for a in answers]
        assert row_counts(loom)["nodes"] == nodes_before + 4  # fragments, not copies
        assert loom.ref("doc").node == answers[0].id
        alts = B.alternatives(loom, "doc", -1)
        assert [a.node for a in alts.branches] == [a.id for a in answers]
        assert [a.current for a in alts.branches] == [True, False, False]

    def test_q3_switching_a_sibling_switches_the_whole_downstream_path(self, loom: Loom) -> None:
        root = doc_tree(loom)
        first, second = B.generate(loom, "doc", n=2, max_tokens=TOKENS).nodes
        B.set_draft(loom, "doc", " Then ")
        deeper = B.generate(loom, "doc", max_tokens=TOKENS).nodes
        tail = deeper[-1].id
        assert loom.path("doc") == [root, first.id, deeper[0].id, tail]
        switched = B.switch(loom, "doc", second.id)
        assert switched.moved and loom.path("doc") == [root, second.id]
        assert B.document(loom, "doc").text == "Once upon a time, " + plain_text(second.content)
        B.switch(loom, "doc", first.id)  # back: to the latest leaf below it
        assert loom.path("doc") == [root, first.id, deeper[0].id, tail]
        loom.undo("doc")
        assert loom.path("doc") == [root, second.id]

    def test_q3_switching_to_a_version_selects_it_without_moving(self, loom: Loom) -> None:
        ids = long_doc(loom, 4)
        original = ids[1]
        [version] = B.edit_span(loom, "doc", 3, 4, "Q")
        B.switch(loom, "doc", original)
        assert loom.path("doc") == ids and loom.ref("doc").node == ids[-1]
        done = B.switch(loom, "doc", version.id)
        assert not done.moved and done.selected == [version.id]
        assert loom.path("doc")[1] == version.id

    def test_q3_switching_to_a_version_off_the_path_moves_there_and_selects_it(
            self, loom: Loom) -> None:
        """A view still at the root, switched to an edited version further down: its
        slot is on the path only once the view has moved, so it moves, then selects."""
        root = doc_tree(loom, "Start. ")
        loom.view("view", "doc")
        B.set_draft(loom, "doc", "a")
        first = B.commit_draft(loom, "doc")
        assert first is not None
        [version] = B.edit_span(loom, "doc", 7, 8, "b")
        assert version.edited_from == first.id
        done = B.switch(loom, "view", version.id)
        assert done.moved and done.selected == [version.id]
        assert loom.path("view") == [root, version.id]
        assert B.document(loom, "view").text == "Start. b"


class TestQ4Editing:
    """Q4: the draft is mutable; editing committed text writes a version node
    (edited_from) and what follows stays attached: nothing is duplicated."""

    def test_q4_editing_node_5_of_18_adds_one_node_and_copies_nothing(self, loom: Loom) -> None:
        ids = long_doc(loom, 18)
        loom.fork("doc", "other")
        before = row_counts(loom)["nodes"]
        doc = B.document(loom, "doc")
        piece = doc.nodes[5]
        [version] = B.edit_span(loom, "doc", piece.start, piece.start + 2, "P-five")
        assert row_counts(loom)["nodes"] == before + 1
        assert version.edited_from == ids[5] and version.slot == ids[5]
        assert loom.path("doc") == ids[:5] + [version.id] + ids[6:]  # downstream attached
        assert B.text(loom, "doc") == path_text(loom, "doc")
        assert "P-five " in B.text(loom, "doc")
        assert loom.path("other") == ids  # other refs keep theirs
        loom.select("other", version.id)  # until they select it
        assert loom.path("other") == loom.path("doc")

    def test_q4_a_span_across_nodes_versions_exactly_the_nodes_it_touches(self, loom: Loom) -> None:
        ids = long_doc(loom, 8)  # "p0 p1 p2 p3 ..." one node per "pN "
        before = row_counts(loom)["nodes"]
        text = B.text(loom, "doc")
        start, end = text.index("1 "), text.index("p4") + 1  # from inside p1 to inside p4
        versions = B.edit_span(loom, "doc", start, end, "[new]")
        assert [v.edited_from for v in versions] == ids[1:5]
        assert row_counts(loom)["nodes"] == before + 4
        assert B.text(loom, "doc") == text[:start] + "[new]" + text[end:]
        assert [plain_text(v.content) for v in versions] == ["p[new]", "", "", "4 "]
        assert loom.path("doc")[5:] == ids[5:]

    def test_q4_edit_span_reaching_into_the_draft_edits_both(self, loom: Loom) -> None:
        ids = long_doc(loom, 2)  # "p0 p1 "
        B.set_draft(loom, "doc", "draft")
        [version] = B.edit_span(loom, "doc", 4, 8, "+")
        assert version.edited_from == ids[1]
        assert B.document(loom, "doc").text == "p0 p+aft"
        assert B.get_draft(loom, "doc") == "aft"
        assert B.edit_span(loom, "doc", 8, 8, "!") == []  # the end of the document: the draft
        assert B.get_draft(loom, "doc") == "aft!"

    def test_q4_insertions_go_into_the_node_they_follow(self, loom: Loom) -> None:
        ids = long_doc(loom, 3)  # "p0 p1 p2 "
        [v] = B.edit_span(loom, "doc", 3, 3, "+")
        assert v.edited_from == ids[0] and plain_text(v.content) == "p0 +"
        [w] = B.edit_span(loom, "doc", 0, 0, ">")
        assert w.edited_from == v.id and w.slot == ids[0]
        assert B.text(loom, "doc") == ">p0 +p1 p2 "

    def test_q4_generating_after_editing_the_head_continues_the_edited_text(self, loom: Loom) -> None:
        ids = long_doc(loom, 2)  # "p0 p1 ", the head written by a model
        [version] = B.edit_span(loom, "doc", 3, 5, "The end of p1")
        answer = B.generate(loom, "doc", max_tokens=TOKENS).nodes[0]
        assert answer.parent == version.id and loom.ref("doc").node == answer.id
        assert loom.path("doc") == [ids[0], version.id, answer.id]

    def test_q4_an_edit_through_a_node_id_changes_no_ref(self, loom: Loom) -> None:
        ids = long_doc(loom, 3)
        [v] = B.edit_span(loom, ids[-1], 0, 2, "P0")
        assert loom.path("doc") == ids and v.edited_from == ids[0]

    def test_q4_bad_ranges_write_nothing(self, loom: Loom) -> None:
        long_doc(loom, 3)
        before = row_counts(loom)
        for start, end in ((-1, 2), (3, 2), (0, 999)):
            with pytest.raises(InvalidInput, match="range"):
                B.edit_span(loom, "doc", start, end, "x")
        assert row_counts(loom) == before


class TestQ5ContentStructure:
    """Q5: buffer nodes reuse the plain text content type; a version only adds
    edited_from; character authorship is computed at render time, never stored."""

    def test_q5_nodes_hold_plain_text_and_versions_add_only_edited_from(self, loom: Loom) -> None:
        ids = long_doc(loom, 2)
        [v] = B.edit_span(loom, "doc", 3, 5, "P1")
        original = loom.node(ids[1])
        assert original.content == [{"type": "text", "text": "p1 "}]
        assert v.content == [{"type": "text", "text": "P1 "}]
        assert (v.edited_from, v.slot, v.role, v.parent) == (ids[1], ids[1], "assistant", ids[0])
        assert original.edited_from is None
        again = loom.append("doc", "p1 ", role="assistant")  # same text, same content row
        assert again.content_id == original.content_id

    def test_q5_document_text_equals_the_resolved_path_plus_draft(self, loom: Loom) -> None:
        long_doc(loom, 6)
        B.edit_span(loom, "doc", 4, 10, "-")
        B.set_draft(loom, "doc", "tail")
        doc = B.document(loom, "doc")
        assert doc.text == path_text(loom, "doc") + "tail" == B.text(loom, "doc")
        assert doc.committed == path_text(loom, "doc")
        assert_covers(doc)


class TestQ6Provenance:
    """Q6: each generation's raw response is stored at once and linked to its node;
    hashes cover final content; a version has its own hash; the original keeps its
    provenance."""

    def test_q6_each_continuation_links_its_stored_raw_response(self, loom: Loom) -> None:
        doc_tree(loom)
        B.set_draft(loom, "doc", "a bird ")
        draft, *answers = B.generate(loom, "doc", n=2, max_tokens=TOKENS).nodes
        assert draft.provenance is None
        gens = []
        for node in answers:
            prov = loom.node(node.id).provenance
            assert prov is not None and prov["provider"] == "local"
            gen = loom.backend.provenance.get_generation(prov["generation"])
            assert gen is not None and gen["response_hash"] == prov["response_hash"]
            assert json.loads(gen["raw_response"])
            gens.append(prov["generation"])
        assert len(set(gens)) == 2
        assert loom.verify().ok

    def test_q6_a_version_has_its_own_hash_and_the_original_keeps_provenance(self, loom: Loom) -> None:
        doc_tree(loom)
        answer = B.generate(loom, "doc", max_tokens=TOKENS).nodes[0]
        start = len("Once upon a time, ")
        [v] = B.edit_span(loom, "doc", start, start, "EDIT ")
        assert v.chain_hash != answer.chain_hash and v.provenance is None
        assert loom.node(answer.id).provenance == answer.provenance
        assert loom.node(answer.id).chain_hash == answer.chain_hash
        assert loom.verify().ok


class TestQ7ContextAssembly:
    """Q7: the prompt is the active path concatenated + the draft; no system prompt
    unless configured; continuation appends at the end; versions come from the path."""

    def _prompt(self, loom: Loom, node_id: str) -> str:
        prov = loom.node(node_id).provenance
        assert prov is not None
        gen = loom.backend.provenance.get_generation(prov["generation"])
        assert gen is not None
        return json.loads(gen["provider_request"])["prompt"]  # type: ignore[no-any-return]

    def test_q7_the_prompt_is_the_document_with_versions_and_draft(self, loom: Loom) -> None:
        long_doc(loom, 5)
        B.edit_span(loom, "doc", 3, 5, "EDITED")
        B.set_draft(loom, "doc", "and then")
        expected = B.text(loom, "doc")
        answer = B.generate(loom, "doc", max_tokens=TOKENS).nodes[1]
        assert self._prompt(loom, answer.id) == expected
        assert "EDITED" in expected and expected.endswith("and then")

    def test_q7_no_system_prompt_unless_configured(self, loom: Loom) -> None:
        doc_tree(loom, "Story: ", system="SYSTEM TEXT")
        answer = B.generate(loom, "doc", max_tokens=TOKENS).nodes[0]
        assert self._prompt(loom, answer.id) == "Story: "
        doc_tree(loom, "Story: ", session="sys", system="SYSTEM TEXT. ",
                 options={"include_system": True})
        answer = B.generate(loom, "sys", max_tokens=TOKENS).nodes[0]
        assert self._prompt(loom, answer.id) == "SYSTEM TEXT. Story: "


class TestNavigation:
    def test_alternatives_at_any_position_list_branches_and_versions(self, loom: Loom) -> None:
        ids = long_doc(loom, 4)
        other = loom.append(ids[1], "q2 ", role="user")  # a branch after p1
        [v] = B.edit_span(loom, "doc", 6, 8, "P2")
        alts = B.alternatives(loom, "doc", 2)
        assert alts.node == v.id
        assert [a.node for a in alts.branches] == [v.id, other.id]
        assert [a.node for a in alts.versions] == [ids[2], v.id]
        assert [a.current for a in alts.versions] == [False, True]
        assert B.alternatives(loom, "doc", ids[1]).index == 1
        with pytest.raises(InvalidInput, match="path holds 4"):
            B.alternatives(loom, "doc", 4)

    def test_diverge_names_where_two_refs_part(self, loom: Loom) -> None:
        ids = long_doc(loom, 4)
        loom.fork("doc~1", "alt")
        alt = loom.append("alt", "ALT ", role="assistant")
        div = B.diverge(loom, "doc", "alt")
        assert (div.kind, div.index, div.base) == ("branch", 3, ids[2])
        assert div.offset == len("p0 p1 p2 ") and div.a == [ids[3]] and div.b == [alt.id]
        loom.view("v", "doc")
        [ver] = B.edit_span(loom, "v", 3, 5, "P1")
        div = B.diverge(loom, "doc", "v")
        assert (div.kind, div.index, div.a, div.b) == ("version", 1, [ids[1]], [ver.id])
        assert B.diverge(loom, "doc", "doc~2").kind == "prefix"
        assert B.diverge(loom, "doc", "doc").kind == "same"
