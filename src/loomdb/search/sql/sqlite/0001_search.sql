-- Full-text search over messages, document revisions and collection items.
-- search_entries holds what filters read; search_text (FTS5) the indexed words, keyed
-- by the entry's seq. Messages are written by the core: a trigger queues each new node
-- id in search_pending (one small row per append) and a search first indexes the queue,
-- so an import is searchable at the next query without slowing the import.
CREATE TABLE search_entries (
  seq INTEGER PRIMARY KEY,
  entity TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  tree_id TEXT,
  role TEXT,
  author TEXT
);
CREATE INDEX search_entries_tree ON search_entries (tree_id);
CREATE VIRTUAL TABLE search_text USING fts5(body, tokenize = 'porter unicode61');
CREATE TABLE search_pending (seq INTEGER PRIMARY KEY, node_id TEXT NOT NULL);
CREATE TRIGGER search_node_written AFTER INSERT ON nodes BEGIN
  INSERT INTO search_pending (node_id) VALUES (new.id);
END;
-- nodes written before this area existed
INSERT INTO search_pending (node_id) SELECT id FROM nodes;
