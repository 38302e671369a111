-- Each line of a ref's log names the tree of its ref, so a store split by tree
-- (PostgreSQL, partitions.py) keeps a ref's log in its tree's partition; SQLite keeps
-- the column for the same rows on both backends. Lines of refs deleted since take the
-- tree of the node they moved to (or from).
ALTER TABLE ref_log ADD COLUMN tree_id TEXT;
UPDATE ref_log SET tree_id = coalesce(
  (SELECT tree_id FROM refs WHERE refs.name = ref_log.ref_name),
  (SELECT tree_id FROM nodes WHERE nodes.id = coalesce(ref_log.new_node, ref_log.old_node)));
