-- Semantic search: one embedding per search entry (float32 little-endian, unit length)
-- in search_vectors, the truth; and search_vec_bits, a sqlite-vec vec0 table of the
-- same vectors quantized to one bit per dimension with the filter columns, which a
-- query scans (hamming distance) for candidates that it then ranks exactly
-- (vec_distance_cosine on search_vectors). Entries are embedded lazily: a trigger
-- queues each new entry and a semantic query embeds the queue first. A vector goes
-- with its entry; its bits are dropped at the next semantic query (search_vec_gone),
-- since only a connection with sqlite-vec loaded may write a vec0 table.
CREATE TABLE search_vectors (seq INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
CREATE VIRTUAL TABLE search_vec_bits USING vec0(
  seq integer primary key,
  bits bit[384],
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
