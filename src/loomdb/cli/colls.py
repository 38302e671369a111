"""Commands on collections: coll new, add, move, tag, set, show, rm, list."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from . import JSON, argument, arguments, emit, loom, repeatable
from . import root as app

if TYPE_CHECKING:
    from ..front.collections import Item


@app.group("coll")
def coll_app() -> None:
    """Collections: lists, trees, tagged sets and tables of anything."""


def _item_text(item: Item) -> str:
    return f"{item.id}\t{item.entity}"


@coll_app.command("new")
@argument("name")
@click.option("--kind", default="list", help="list, tree, tagged or table.")
@JSON
@click.pass_context
def coll_new(ctx: click.Context, name: str, kind: str, as_json: bool) -> None:
    """Create a collection."""

    coll = loom(ctx).collections.new(name, kind)
    emit(as_json, coll.to_json(), coll.name)


@coll_app.command("add")
@argument("name")
@argument("entity", help="Any address: node, tree:ID, doc:NAME, coll:NAME[/ITEM], sha256:...")
@click.option("--parent", help="Nest under this item (tree).")
@click.option("--after", help="Place right after this item.")
@repeatable("--tag")
@repeatable("--field", help="K=V (repeatable).")
@JSON
@click.pass_context
def coll_add(ctx: click.Context, name: str, entity: str, parent: str | None, after: str | None,
             tag: list[str], field: list[str], as_json: bool) -> None:
    """Add an item pointing at ENTITY (last, unless --after)."""
    from ..front.collections import pairs as parse_pairs

    it = loom(ctx).collections.add(name, entity, parent=parent, after=after, tags=tag,
                                 fields=parse_pairs(field, "--field"))
    emit(as_json, {"item": it.id}, it.id)


@coll_app.command("move")
@argument("name")
@argument("item")
@click.option("--parent")
@click.option("--after")
@click.option("--first", is_flag=True)
@JSON
@click.pass_context
def coll_move(ctx: click.Context, name: str, item: str, parent: str | None, after: str | None,
              first: bool, as_json: bool) -> None:
    """Move an item (only its own row changes)."""

    it = loom(ctx).collections.move(name, item, parent=parent, after=after, first=first)
    emit(as_json, {"item": it.id, "parent": it.parent}, _item_text(it))


@coll_app.command("tag")
@argument("name")
@argument("item")
@arguments("tags")
@click.option("--remove", is_flag=True)
@JSON
@click.pass_context
def coll_tag(ctx: click.Context, name: str, item: str, tags: list[str], remove: bool,
             as_json: bool) -> None:
    """Add (or --remove) tags on an item."""

    it = loom(ctx).collections.tag(name, item, tags, remove=remove)
    emit(as_json, {"item": it.id, "tags": it.tags}, " ".join(it.tags))


@coll_app.command("set")
@argument("name")
@argument("item")
@arguments("pairs", metavar="K=V...")
@JSON
@click.pass_context
def coll_set(ctx: click.Context, name: str, item: str, pairs: list[str], as_json: bool) -> None:
    """Set fields on an item (K= removes K)."""
    from ..front.collections import pairs as parse_pairs

    it = loom(ctx).collections.set_fields(name, item, parse_pairs(pairs, "field"))
    emit(as_json, {"item": it.id, "fields": it.fields},
         " ".join(f"{k}={v}" for k, v in it.fields.items()))


@coll_app.command("show")
@argument("name")
@click.option("--tag")
@repeatable("--where", help="K=V (repeatable).")
@click.option("--group-by", help="Group by a field (kanban).")
@JSON
@click.pass_context
def coll_show(ctx: click.Context, name: str, tag: str | None, where: list[str],
              group_by: str | None, as_json: bool) -> None:
    """Items in order (tree: depth-first), filtered, optionally grouped by a field."""
    from ..front.collections import pairs as parse_pairs

    out = loom(ctx).collections.show(name, tag=tag, where=parse_pairs(where, "--where"),
                                     group_by=group_by)
    if "groups" in out:
        text = "\n".join(f"[{g}]\n" + "\n".join(f"  {_line(r)}" for r in rows)
                         for g, rows in out["groups"].items())
    else:
        text = "\n".join("  " * r["depth"] + _line(r) for r in out["items"])
    emit(as_json, out, text)


def _line(row: dict[str, Any]) -> str:
    """An item as a person reads it: its id (for move, tag, rm), its entity's title,
    then the address (when it says more than the title)."""
    parts = [row["id"], row["title"]]
    if row["entity"] not in (row["title"], f"doc:{row['title']}", f"coll:{row['title']}"):
        parts.append(row["entity"])
    return "\t".join(parts) + ("\t(dangling)" if row.get("dangling") else "")


@coll_app.command("rm")
@argument("name")
@argument("item")
@JSON
@click.pass_context
def coll_rm(ctx: click.Context, name: str, item: str, as_json: bool) -> None:
    """Remove an item and what is nested under it."""

    gone = loom(ctx).collections.remove(name, item)
    emit(as_json, {"removed": gone}, " ".join(gone))


@coll_app.command("list")
@JSON
@click.pass_context
def coll_list(ctx: click.Context, as_json: bool) -> None:
    """Every collection."""

    rows = [c.to_json() for c in loom(ctx).collections.list()]
    emit(as_json, {"collections": rows},
         "\n".join(f"{r['collection']}\t{r['kind']}" for r in rows))
