-- Collections: items in order (fractional keys: a move rewrites one row), optionally
-- nested (tree), with tags and fields. An item points at any address (references).
CREATE TABLE coll_collections (
  id text PRIMARY KEY,
  name text NOT NULL UNIQUE,
  kind text NOT NULL,
  created_at text NOT NULL
);
CREATE TABLE coll_items (
  id text PRIMARY KEY,
  collection_id text NOT NULL,
  parent_id text,
  ord text COLLATE "C" NOT NULL,
  entity text NOT NULL,
  entity_key text NOT NULL,
  created_at text NOT NULL
);
CREATE INDEX coll_items_order ON coll_items (collection_id, parent_id, ord);
CREATE INDEX coll_items_entity ON coll_items (entity_key);
CREATE TABLE coll_tags (
  item_id text NOT NULL,
  tag text NOT NULL,
  PRIMARY KEY (item_id, tag)
);
CREATE INDEX coll_tags_tag ON coll_tags (tag);
CREATE TABLE coll_fields (
  item_id text NOT NULL,
  key text NOT NULL,
  value text NOT NULL,
  PRIMARY KEY (item_id, key)
);
