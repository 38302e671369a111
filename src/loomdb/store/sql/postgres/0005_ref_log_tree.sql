-- Each line of a ref's log names the tree of its ref, so a store split by tree
-- (partitions.py) keeps a ref's log in its tree's partition. Lines of refs deleted since
-- take the tree of the node they moved to (or from).
ALTER TABLE ref_log ADD COLUMN tree_id text COLLATE "C";
UPDATE ref_log l SET tree_id = coalesce(
  (SELECT r.tree_id FROM refs r WHERE r.name = l.ref_name),
  (SELECT n.tree_id FROM nodes n WHERE n.id = coalesce(l.new_node, l.old_node)));
