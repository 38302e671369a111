-- Collections: items in order (fractional keys: a move rewrites one row), optionally
-- nested (tree), with tags and fields. An item points at any address (references).
CREATE TABLE coll_collections (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE coll_items (
  id TEXT PRIMARY KEY,
  collection_id TEXT NOT NULL,
  parent_id TEXT,
  ord TEXT NOT NULL,
  entity TEXT NOT NULL,
  entity_key TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX coll_items_order ON coll_items (collection_id, parent_id, ord);
CREATE INDEX coll_items_entity ON coll_items (entity_key);
CREATE TABLE coll_tags (
  item_id TEXT NOT NULL,
  tag TEXT NOT NULL,
  PRIMARY KEY (item_id, tag)
);
CREATE INDEX coll_tags_tag ON coll_tags (tag);
CREATE TABLE coll_fields (
  item_id TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (item_id, key)
);
