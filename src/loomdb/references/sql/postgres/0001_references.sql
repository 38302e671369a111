-- Cross-references between any two addressable things. `*_key` is the identity a
-- reference resolves through at read time (a document id, an item id...), so a moved or
-- re-versioned target is still found; `*_addr` is the address as written, shown when
-- the target is gone (dangling).
CREATE TABLE ref_links (
  id text PRIMARY KEY,
  from_key text NOT NULL,
  from_addr text NOT NULL,
  to_key text NOT NULL,
  to_addr text NOT NULL,
  type text NOT NULL,
  created_at text NOT NULL
);
CREATE INDEX ref_links_to ON ref_links (to_key);
CREATE INDEX ref_links_to_addr ON ref_links (to_addr);
CREATE INDEX ref_links_from ON ref_links (from_key);
