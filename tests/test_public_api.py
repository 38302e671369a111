"""The public API: what `import loomdb` offers is exactly `__all__`, and the errors form
one hierarchy rooted at LoomError."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import loomdb
from loomdb import errors
from loomdb.storage_ops import Storage, storage

#: modules whose public names are the library's contract (each lists them in __all__)
PUBLIC_MODULES = ["loomdb", "loomdb.api", "loomdb.edge"]

#: what the CLI can do, as methods of `loomdb.Loom`
SERVICES = [
    "new_tree", "append", "edit", "select", "link", "bookmark", "tag", "exclude", "prune",
    "path", "children", "siblings", "versions", "leaves", "branch_points", "node", "meta",
    "tree", "trees", "archive", "rename", "verify", "context", "request", "generate",
    "chat_session", "chat_turn", "compact", "maybe_compact", "models", "import_file",
    "export", "export_file", "copy_to", "tree_view", "fork", "view", "set_ref", "ref",
    "refs", "ref_log", "undo", "delete_ref", "buffer", "edges",
    # the area objects of the front door, acting for the operator, and for a caller
    "documents", "collections", "references", "search", "forget", "gc", "agents",
    "shares", "as_", "operator", "runtime",
]


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


def test_every_public_name_of_the_package_is_listed() -> None:
    """The other direction: nothing public is left out of `__all__` (submodules aside)."""
    modules = {name for _, name, _ in pkgutil.iter_modules(loomdb.__path__)}
    # dir(), not vars(): the package imports its names on first use
    public = {n for n in dir(loomdb)
              if not n.startswith("_") and n not in modules
              and not inspect.ismodule(getattr(loomdb, n))}
    public -= {"annotations"}
    assert public == set(loomdb.__all__), public ^ set(loomdb.__all__)


def test_public_modules_list_exactly_their_public_names() -> None:
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        listed = set(module.__all__)
        for name in listed:
            assert hasattr(module, name), (module_name, name)
        if module_name == "loomdb":
            continue
        defined = {n for n, v in vars(module).items() if not n.startswith("_")
                   and getattr(v, "__module__", module_name) == module_name
                   and (inspect.isclass(v) or inspect.isfunction(v))}
        assert defined <= listed, (module_name, defined - listed)


def test_every_error_is_exported() -> None:
    for name, value in vars(errors).items():
        if isinstance(value, type) and issubclass(value, errors.LoomError):
            assert name in loomdb.__all__, name


def test_the_front_door_offers_every_service() -> None:
    """What the CLI can do is a public, documented method of `loomdb.Loom`."""
    for name in SERVICES:
        member = inspect.getattr_static(loomdb.Loom, name)
        assert (getattr(member, "__doc__", None) or "").strip(), name
    for name in ["text", "document", "draft", "set_draft", "append_draft", "commit", "edit",
                 "alternatives", "switch", "diverge"]:
        assert (getattr(loomdb.Buffer, name).__doc__ or "").strip(), name


def test_open_returns_the_front_door_with_its_buffer(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with loomdb.open(str(tmp_path / "s")) as loom:
        tree, _ = loom.new_tree("once upon a time", mode="buffer", session="doc")
        assert loom.buffer.text("doc") == "once upon a time"
        assert loom.buffer.append_draft("doc", ", there was") == ", there was"
        node = loom.buffer.commit("doc")
        assert node is not None and loom.buffer.text("doc") == "once upon a time, there was"
        view = loom.tree_view(tree.id)
        shown = view.to_json()
        assert shown["nodes"][0]["children"] == [node.id] == [shown["nodes"][1]["id"]]


#: the core's own public calls: content, blobs and the low-level writes importers use,
#: areas' units, reads by name (the everyday calls are in the test above)
CORE = {
    "open", "close", "unit", "has_area", "content_body", "prepare", "put_blob", "blob_list",
    "delete_blob", "blob", "file_content", "check_values", "write_node", "build_node",
    "recorded_areas",
    "resolve", "nodes", "path_rows", "tree_nodes", "context_rows", "backup", "create_ref",
    "edge_map", "watcher",
}


def test_the_front_door_is_what_it_offers_and_no_storage_pass_through() -> None:
    """`loomdb.Loom`'s public names are the services, the area objects and the core's
    calls; the storage operations services build on (transactions, CAS moves, drafts,
    records, lookups by id) are reached through `storage(loom)` only."""
    public = {n for n in dir(loomdb.Loom) if not n.startswith("_")}
    handle = {n for n in dir(Storage) if not n.startswith("_")} - {"backend"}
    assert {"transaction", "move_ref", "write_draft", "record_generation", "nodes_by_id",
            "forgetting"} <= handle
    assert public & handle == set()
    assert public - set(SERVICES) - CORE == set(), "list a new public name of loomdb.Loom here"
    for name in public:
        assert (getattr(inspect.getattr_static(loomdb.Loom, name), "__doc__", None)
                or "").strip(), name


def test_the_storage_handle_is_the_loom_s_own(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with loomdb.open(str(tmp_path / "s")) as loom:
        handle = storage(loom)
        assert handle is storage(loom)
        tree, root = loom.new_tree("hi", session="main")
        with handle.transaction():
            assert not handle.committed()
            moved = handle.move_ref(loom.ref("main"), root.id, "test")
        assert handle.committed() and handle.head(moved) == root.id
        assert handle.tree_by_id(tree.id) is not None and handle.find_ref("nope") is None
