-- A long-lived process ranks from an in-memory copy of the vectors (as on PostgreSQL),
-- refreshed by reading only the vectors written since: each vector write takes the
-- next numbers of search_vec_clock (writers are serialized, so they grow in commit
-- order, and a reindex never reuses one) and records it as the vector's vseq.
ALTER TABLE search_vectors ADD COLUMN vseq INTEGER NOT NULL DEFAULT 0;
UPDATE search_vectors SET vseq = seq;
CREATE INDEX search_vectors_by_vseq ON search_vectors (vseq);
CREATE TABLE search_vec_clock (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  last INTEGER NOT NULL
);
INSERT INTO search_vec_clock VALUES (1, (SELECT coalesce(max(vseq), 0) FROM search_vectors));
