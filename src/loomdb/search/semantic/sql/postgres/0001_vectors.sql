-- Semantic search (see the SQLite script): vectors as bytea (float32, unit length),
-- ranked in the process with numpy over a cache that follows `vseq`, which writers
-- take under one advisory lock so it grows in commit order.
CREATE TABLE search_vectors (
  seq bigint PRIMARY KEY REFERENCES search_entries (seq) ON DELETE CASCADE,
  vseq bigint NOT NULL,
  embedding bytea NOT NULL
);
CREATE INDEX search_vectors_by_vseq ON search_vectors (vseq);
CREATE SEQUENCE search_vectors_vseq;
CREATE TABLE search_vec_pending (
  seq bigint PRIMARY KEY REFERENCES search_entries (seq) ON DELETE CASCADE
);
CREATE FUNCTION search_entry_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_vec_pending (seq) VALUES (NEW.seq) ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER search_entry_written AFTER INSERT ON search_entries
  FOR EACH ROW EXECUTE FUNCTION search_entry_written();
INSERT INTO search_vec_pending (seq) SELECT seq FROM search_entries;
