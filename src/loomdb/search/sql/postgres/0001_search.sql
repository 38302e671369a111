-- Full-text search over messages, document revisions and collection items (see the
-- SQLite script for the design): a tsvector column with a GIN index, and the same
-- queue of new node ids filled by a trigger and indexed at the next query.
CREATE TABLE search_entries (
  seq bigserial PRIMARY KEY,
  entity text NOT NULL UNIQUE,
  kind text NOT NULL,
  tree_id text,
  role text,
  author text,
  body text NOT NULL,
  tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED
);
CREATE INDEX search_entries_tsv ON search_entries USING gin (tsv);
CREATE INDEX search_entries_tree ON search_entries (tree_id);
CREATE TABLE search_pending (seq bigserial PRIMARY KEY, node_id text NOT NULL);
CREATE FUNCTION search_node_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_pending (node_id) VALUES (NEW.id);
  RETURN NULL;
END
$$;
CREATE TRIGGER search_node_written AFTER INSERT ON nodes
  FOR EACH ROW EXECUTE FUNCTION search_node_written();
-- nodes written before this area existed
INSERT INTO search_pending (node_id) SELECT id FROM nodes;
