"""A tiny area used to test the area seam: notes pinned to nodes."""

from loomdb.store.areas import Area

NOTES = Area("notes", "notes_area")
