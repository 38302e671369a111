"""The public API: what `import loomdb` offers is exactly `__all__`, and the errors form
one hierarchy rooted at LoomError."""

from __future__ import annotations

import loomdb
from loomdb import errors


def test_all_names_exist_and_are_public() -> None:
    assert sorted(loomdb.__all__) == sorted(set(loomdb.__all__))
    for name in loomdb.__all__:
        assert not name.startswith("_") and hasattr(loomdb, name), name


def test_every_error_is_a_loom_error_and_not_found_is_a_key_error() -> None:
    classes = [getattr(errors, n) for n in dir(errors)
               if isinstance(getattr(errors, n), type) and issubclass(getattr(errors, n), Exception)]
    assert all(issubclass(c, errors.LoomError) for c in classes)
    assert issubclass(errors.NotFound, KeyError)
    assert issubclass(errors.InvalidInput, ValueError)
    assert errors.InvalidInput("content[0]", "bad").where == "content[0]"


def test_open_gives_a_loom_that_closes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with loomdb.open(str(tmp_path / "s")) as loom:
        assert isinstance(loom, loomdb.Loom)
        tree, node = loom.new_tree("hi")
        assert loom.tree(tree.id).root == node.id
