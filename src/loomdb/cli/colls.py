"""Commands on collections: coll new, add, move, tag, set, show, rm, list."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from ..errors import InvalidInput
from . import JSON, emit, loom
from . import root as app

if TYPE_CHECKING:
    from ..collections.storage import Item

coll_app = typer.Typer(help="Collections: lists, trees, tagged sets and tables of anything.",
                       no_args_is_help=True)
app.add_typer(coll_app, name="coll")


def _pairs(values: list[str], where: str) -> dict[str, str]:
    out = {}
    for v in values:
        key, eq, value = v.partition("=")
        if not eq or not key:
            raise InvalidInput(f"{where} {v!r}", "expected K=V")
        out[key] = value
    return out


def _item_text(item: Item) -> str:
    return f"{item.id}\t{item.entity}"


@coll_app.command("new")
def coll_new(ctx: typer.Context, name: str = typer.Argument(...),
             kind: str = typer.Option("list", "--kind", help="list, tree, tagged or table."),
             as_json: bool = JSON) -> None:
    """Create a collection."""
    from ..collections import service as K

    coll = K.new(loom(ctx), name, kind)
    emit(as_json, coll.to_json(), coll.name)


@coll_app.command("add")
def coll_add(ctx: typer.Context, name: str = typer.Argument(...),
             entity: str = typer.Argument(..., help="Any address: node, tree:ID, doc:NAME, "
                                          "coll:NAME[/ITEM], sha256:..."),
             parent: str = typer.Option(None, "--parent", help="Nest under this item (tree)."),
             after: str = typer.Option(None, "--after", help="Place right after this item."),
             tag: list[str] = typer.Option([], "--tag"),
             field: list[str] = typer.Option([], "--field", help="K=V (repeatable)."),
             as_json: bool = JSON) -> None:
    """Add an item pointing at ENTITY (last, unless --after)."""
    from ..collections import service as K

    it = K.add(loom(ctx), name, entity, parent=parent, after=after, tags=tag,
               fields=_pairs(field, "--field"))
    emit(as_json, {"item": it.id}, it.id)


@coll_app.command("move")
def coll_move(ctx: typer.Context, name: str = typer.Argument(...), item: str = typer.Argument(...),
              parent: str = typer.Option(None, "--parent"),
              after: str = typer.Option(None, "--after"),
              first: bool = typer.Option(False, "--first"), as_json: bool = JSON) -> None:
    """Move an item (only its own row changes)."""
    from ..collections import service as K

    it = K.move(loom(ctx), name, item, parent=parent, after=after, first=first)
    emit(as_json, {"item": it.id, "parent": it.parent}, _item_text(it))


@coll_app.command("tag")
def coll_tag(ctx: typer.Context, name: str = typer.Argument(...), item: str = typer.Argument(...),
             tags: list[str] = typer.Argument(...),
             remove: bool = typer.Option(False, "--remove"), as_json: bool = JSON) -> None:
    """Add (or --remove) tags on an item."""
    from ..collections import service as K

    it = K.tag(loom(ctx), name, item, tags, remove=remove)
    emit(as_json, {"item": it.id, "tags": it.tags}, " ".join(it.tags))


@coll_app.command("set")
def coll_set(ctx: typer.Context, name: str = typer.Argument(...), item: str = typer.Argument(...),
             pairs: list[str] = typer.Argument(..., metavar="K=V..."),
             as_json: bool = JSON) -> None:
    """Set fields on an item (K= removes K)."""
    from ..collections import service as K

    it = K.set_fields(loom(ctx), name, item, dict(_pairs(pairs, "field")))
    emit(as_json, {"item": it.id, "fields": it.fields},
         " ".join(f"{k}={v}" for k, v in it.fields.items()))


@coll_app.command("show")
def coll_show(ctx: typer.Context, name: str = typer.Argument(...),
              tag: str = typer.Option(None, "--tag"),
              where: list[str] = typer.Option([], "--where", help="K=V (repeatable)."),
              group_by: str = typer.Option(None, "--group-by", help="Group by a field (kanban)."),
              as_json: bool = JSON) -> None:
    """Items in order (tree: depth-first), filtered, optionally grouped by a field."""
    from ..collections import service as K

    out = K.show(loom(ctx), name, tag=tag, where=_pairs(where, "--where"), group_by=group_by)
    if "groups" in out:
        text = "\n".join(f"[{g}]\n" + "\n".join(f"  {r['id']}\t{r['entity']}" for r in rows)
                         for g, rows in out["groups"].items())
    else:
        text = "\n".join("  " * r["depth"] + f"{r['id']}\t{r['entity']}" for r in out["items"])
    emit(as_json, out, text)


@coll_app.command("rm")
def coll_rm(ctx: typer.Context, name: str = typer.Argument(...), item: str = typer.Argument(...),
            as_json: bool = JSON) -> None:
    """Remove an item and what is nested under it."""
    from ..collections import service as K

    gone = K.remove(loom(ctx), name, item)
    emit(as_json, {"removed": gone}, " ".join(gone))


@coll_app.command("list")
def coll_list(ctx: typer.Context, as_json: bool = JSON) -> None:
    """Every collection."""
    from ..collections import service as K

    rows = [c.to_json() for c in K.collections(loom(ctx))]
    emit(as_json, {"collections": rows},
         "\n".join(f"{r['collection']}\t{r['kind']}" for r in rows))
