-- Semantic search: one embedding per search entry (float32 little-endian, unit length,
-- ranked with sqlite-vec's vec_distance_cosine). Entries are embedded lazily: a trigger
-- queues each new entry and a semantic query embeds the queue first. A vector goes
-- with its entry.
CREATE TABLE search_vectors (seq INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
CREATE TABLE search_vec_pending (seq INTEGER PRIMARY KEY);
CREATE TRIGGER search_entry_written AFTER INSERT ON search_entries BEGIN
  INSERT OR IGNORE INTO search_vec_pending (seq) VALUES (new.seq);
END;
CREATE TRIGGER search_entry_gone AFTER DELETE ON search_entries BEGIN
  DELETE FROM search_vectors WHERE seq = old.seq;
  DELETE FROM search_vec_pending WHERE seq = old.seq;
END;
-- entries indexed before this area existed
INSERT INTO search_vec_pending (seq) SELECT seq FROM search_entries;
