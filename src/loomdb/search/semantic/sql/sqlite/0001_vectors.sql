-- Semantic search: one embedding per search entry (float32 little-endian, unit length)
-- in search_vectors, the truth; and search_vec_index, a sqlite-vec vec0 table of the
-- same vectors with the filter columns, which a query scans (cosine distance, exact
-- k nearest, filters applied in the scan). Entries are embedded lazily: a trigger
-- queues each new entry and a semantic query embeds the queue first. A vector goes
-- with its entry; its row in the vec0 table is dropped at the next semantic query (search_vec_gone),
-- since only a connection with sqlite-vec loaded may write a vec0 table.
CREATE TABLE search_vectors (seq INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
CREATE VIRTUAL TABLE search_vec_index USING vec0(
  seq integer primary key,
  embedding float[384] distance_metric=cosine,
  kind text,
  tree_id text,
  role text,
  author text
);
CREATE TABLE search_vec_pending (seq INTEGER PRIMARY KEY);
CREATE TABLE search_vec_gone (seq INTEGER PRIMARY KEY);
CREATE TRIGGER search_entry_written AFTER INSERT ON search_entries BEGIN
  INSERT OR IGNORE INTO search_vec_pending (seq) VALUES (new.seq);
END;
CREATE TRIGGER search_entry_gone AFTER DELETE ON search_entries BEGIN
  DELETE FROM search_vectors WHERE seq = old.seq;
  DELETE FROM search_vec_pending WHERE seq = old.seq;
  INSERT OR IGNORE INTO search_vec_gone (seq) VALUES (old.seq);
END;
-- entries indexed before this area existed
INSERT INTO search_vec_pending (seq) SELECT seq FROM search_entries;
