-- Cross-references between any two addressable things. `*_key` is the identity a
-- reference resolves through at read time (a document id, an item id...), so a moved or
-- re-versioned target is still found; `*_addr` is the address as written, shown when
-- the target is gone (dangling).
CREATE TABLE ref_links (
  id TEXT PRIMARY KEY,
  from_key TEXT NOT NULL,
  from_addr TEXT NOT NULL,
  to_key TEXT NOT NULL,
  to_addr TEXT NOT NULL,
  type TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX ref_links_to ON ref_links (to_key);
CREATE INDEX ref_links_to_addr ON ref_links (to_addr);
CREATE INDEX ref_links_from ON ref_links (from_key);
