-- Ranking from an index, where the `rum` extension is installed (Debian's
-- postgresql-NN-rum). A GIN index finds the matches, but ranking them reads each
-- match's tsvector from the table before the limit applies: a word found in a tenth
-- of a million entries costs a hundred thousand page reads. A RUM index keeps each
-- word's positions and hands over matches best first (`ORDER BY tsv <=> query`), but
-- adding one entry to it costs over a millisecond, while building it in bulk costs
-- ~50 us an entry. So new entries go to `search_tail` (a GIN index, cheap to add to,
-- small enough to rank by reading), and search/chunks.py seals the tail in bulk into
-- RUM-indexed tables `search_chunk_N` (registered in `search_chunks`), merging chunks
-- of like size as they accumulate, the way a log-structured merge tree does. A query
-- takes the best of the tail and of every chunk. Where the extension is missing, or
-- the role may not create it, none of this exists and search_entries keeps its GIN
-- index (search/service.py looks for `search_chunks`); `chunks.enable` runs this
-- script again once the extension is there.
DO $$
BEGIN
  IF to_regclass('search_chunks') IS NOT NULL
     OR NOT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'rum') THEN
    RETURN;
  END IF;
  BEGIN
    CREATE EXTENSION IF NOT EXISTS rum;
  EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'loomdb: no rights to create the rum extension; search ranks with GIN';
    RETURN;
  END;
  CREATE TABLE search_chunks (id bigserial PRIMARY KEY, entries bigint NOT NULL);  -- as built
  CREATE TABLE search_tail (
    seq bigint PRIMARY KEY, kind text NOT NULL, tree_id text, role text, author text,
    tsv tsvector NOT NULL);
  INSERT INTO search_tail SELECT seq, kind, tree_id, role, author, tsv FROM search_entries;
  CREATE INDEX search_tail_tsv ON search_tail USING gin (tsv);
  DROP INDEX search_entries_tsv;
  ALTER TABLE search_entries DROP COLUMN tsv;
  -- Both triggers read search_chunks before they touch the tail, so every writer
  -- takes the chunk list before the tail, as a seal does (no deadlock).
  CREATE FUNCTION search_entry_added() RETURNS trigger LANGUAGE plpgsql AS $f$
  BEGIN
    PERFORM 1 FROM search_chunks LIMIT 1;
    INSERT INTO search_tail VALUES (NEW.seq, NEW.kind, NEW.tree_id, NEW.role, NEW.author,
                                    to_tsvector('english', NEW.body));
    RETURN NULL;
  END
  $f$;
  CREATE TRIGGER search_entry_added AFTER INSERT ON search_entries
    FOR EACH ROW EXECUTE FUNCTION search_entry_added();
  CREATE FUNCTION search_entry_removed() RETURNS trigger LANGUAGE plpgsql AS $f$
  DECLARE chunk bigint;
  BEGIN
    FOR chunk IN SELECT id FROM search_chunks LOOP
      EXECUTE format('DELETE FROM search_chunk_%s WHERE seq = $1', chunk) USING OLD.seq;
    END LOOP;
    DELETE FROM search_tail WHERE seq = OLD.seq;
    RETURN NULL;
  END
  $f$;
  CREATE TRIGGER search_entry_removed AFTER DELETE ON search_entries
    FOR EACH ROW EXECUTE FUNCTION search_entry_removed();
END
$$;
