-- The SQLite store rewrites its node and ref layout in this migration (see its script).
-- Here: the index on refs.node_id goes (no query reads refs by node, and every move
-- paid for it), and the refs row records which line of the ref's log brought it to
-- its head, so a locked read of the row gives the line a move must follow.
DROP INDEX IF EXISTS refs_node;
ALTER TABLE refs ADD COLUMN seq bigint NOT NULL DEFAULT 0;
UPDATE refs r SET seq = coalesce((SELECT max(l.seq) FROM ref_log l WHERE l.ref_name = r.name), 0);
