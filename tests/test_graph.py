"""Trees, nodes and their computed views: path, children, siblings, leaves, branch points."""

from __future__ import annotations

import pytest

from helpers import thread
from loomdb import AmbiguousName, InvalidInput, Loom, NotFound


class TestTrees:
    def test_title_defaults_to_the_first_words_of_the_root(self, loom: Loom) -> None:
        tree, _ = loom.new_tree("How do looms weave many threads into one cloth at once")
        assert tree.title == "How do looms weave many threads into one"

    def test_title_is_untitled_without_text(self, loom: Loom) -> None:
        ref = loom.put_blob(b"\x89PNG fake", "image/png")
        tree, _ = loom.new_tree([{"type": "image", "ref": ref, "mime_type": "image/png"}])
        assert tree.title == "Untitled"

    def test_mode_is_fixed_at_creation_and_listed(self, loom: Loom) -> None:
        tree, _ = loom.new_tree("Once upon a time", mode="buffer")
        assert loom.tree(tree.id).mode == "buffer"
        assert [t.mode for t in loom.trees()] == ["buffer"]
        with pytest.raises(InvalidInput):
            loom.new_tree("x", mode="chat")

    def test_trees_count_nodes_and_archive_hides_them(self, loom: Loom) -> None:
        ids = thread(loom, ["a", "b", "c"])
        tree = loom.tree(ids[0])
        assert tree.nodes == 3 and tree.root == ids[0]
        loom.archive(tree.id)
        assert loom.trees() == []
        assert [t.id for t in loom.trees(archived=True)] == [tree.id]

    def test_a_tree_is_found_by_prefix_or_by_a_node_in_it(self, loom: Loom) -> None:
        ids = thread(loom, ["a", "b"])
        tree = loom.tree(ids[1])
        assert loom.tree(tree.id[:10]).id == tree.id
        assert loom.tree("main").id == tree.id


class TestComputedViews:
    def test_children_siblings_leaves_and_branch_points(self, loom: Loom) -> None:
        _, r = loom.new_tree("root")
        a = loom.append(r.id, "a", role="assistant")
        b = loom.append(r.id, "b", role="assistant")
        a1 = loom.append(a.id, "a1")
        a2 = loom.append(a.id, "a2")
        assert loom.children(r.id) == [a.id, b.id]
        assert loom.siblings(a.id) == [b.id]
        assert loom.siblings(r.id) == []
        assert loom.leaves(r.tree) == [b.id, a1.id, a2.id]
        assert loom.branch_points(r.tree) == [r.id, a.id]

    def test_a_path_is_root_first(self, loom: Loom) -> None:
        ids = thread(loom, ["1", "2", "3", "4"])
        assert loom.path(ids[3]) == ids

    def test_children_hang_on_the_slot_so_every_version_sees_them(self, loom: Loom) -> None:
        ids = thread(loom, ["1", "2", "3"])
        v = loom.edit(ids[1], "2'")
        assert loom.children(v.id) == loom.children(ids[1]) == [ids[2]]
        assert loom.siblings(v.id) == []
        assert loom.branch_points(ids[0]) == []

    def test_leaves_skip_pruned_branches_unless_asked(self, loom: Loom) -> None:
        _, r = loom.new_tree("root")
        a = loom.append(r.id, "a", role="assistant")
        a1 = loom.append(a.id, "a1")
        b = loom.append(r.id, "b", role="assistant")
        loom.prune(a.id)
        assert loom.leaves(r.tree) == [b.id]
        assert loom.leaves(r.tree, include_pruned=True) == [a1.id, b.id]

    def test_a_multi_source_edge_records_its_sources_with_roles(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a"])
        loom.fork(ids[0], "side")
        note = loom.append("side", "a side note", role="assistant")
        n = loom.append("main", "use both", also=[note.id, (ids[0], "instruction")])
        assert loom.node(n.id).sources == ((note.id, "context"), (ids[0], "instruction"))


class TestHeadish:
    def test_names_ids_prefixes_and_ancestors(self, loom: Loom) -> None:
        ids = thread(loom, ["1", "2", "3", "4"])
        assert loom.resolve(ids[2]).node == ids[2]
        unique = next(ids[2][:n] for n in range(6, 27)
                      if not any(o.startswith(ids[2][:n]) for o in ids if o != ids[2]))
        assert loom.resolve(unique.lower()).node == ids[2]
        assert loom.resolve("main").node == ids[3]
        assert loom.resolve("main^").node == ids[2]
        assert loom.resolve("main~3").node == ids[0]
        assert loom.resolve("main^^").node == ids[1]
        assert loom.resolve("main~0").node == ids[3]

    def test_only_an_exact_session_name_moves_the_session(self, loom: Loom) -> None:
        ids = thread(loom, ["1", "2"])
        assert loom.resolve("main").session == "main"
        assert loom.resolve("main^").session is None
        loom.append(ids[0], "branch", role="assistant")
        assert loom.ref("main").node == ids[1]

    def test_unknown_names_list_candidates(self, loom: Loom) -> None:
        thread(loom, ["1"], session="mainline")
        with pytest.raises(NotFound) as err:
            loom.resolve("mainlin")
        assert "mainline" in err.value.candidates
        assert isinstance(err.value, KeyError)

    def test_ambiguous_prefixes_list_candidates(self, loom: Loom) -> None:
        ids = [loom.new_tree(str(i))[1].id for i in range(40)]
        common = _longest_shared_prefix(ids)
        with pytest.raises(AmbiguousName) as err:
            loom.resolve(common)
        assert len(err.value.candidates) >= 2

    def test_an_ambiguous_prefix_counts_every_candidate(self, loom: Loom) -> None:
        _, root = loom.new_tree("root", session="s")
        for i in range(24):
            loom.append("s", str(i))
        ids = loom.path("s")
        # the longest prefix that more than ten of them share (ids made close in time
        # share their first characters)
        prefix = max((i[:k] for i in ids for k in range(6, 26)
                      if sum(j.startswith(i[:k]) for j in ids) > 10), key=len)
        matching = [i for i in ids if i.startswith(prefix)]
        with pytest.raises(AmbiguousName) as err:
            loom.resolve(prefix)
        assert sorted(err.value.candidates) == sorted(matching)
        shown = str(err.value)
        assert f"matches {len(matching)}: " in shown and f"and {len(matching) - 10} more" in shown

    def test_going_above_the_root_is_an_error(self, loom: Loom) -> None:
        thread(loom, ["1", "2"])
        with pytest.raises(InvalidInput, match="goes 5 up"):
            loom.resolve("main~5")

    @pytest.mark.parametrize("bad", ["", "main~x", "main^2", "~1", "main~1~"])
    def test_malformed_headish(self, loom: Loom, bad: str) -> None:
        thread(loom, ["1", "2"])
        with pytest.raises((InvalidInput, NotFound)):
            loom.resolve(bad)


def _longest_shared_prefix(ids: list[str]) -> str:
    best = ""
    for a in ids:
        for b in ids:
            if a == b:
                continue
            n = 0
            while n < len(a) and a[n] == b[n]:
                n += 1
            if n > len(best):
                best = a[:n]
    assert len(best) >= 6
    return best
