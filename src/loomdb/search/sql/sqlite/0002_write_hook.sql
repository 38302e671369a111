-- Messages reach the index by the area's write hook (search/hooks.py), which the core
-- calls on every node it writes, in the write's transaction, instead of a trigger on
-- the core's `nodes` table: the area touches no table of the core's. Nodes a lost
-- trigger missed (a core migration that rebuilt `nodes` dropped it) are queued here,
-- once; then the trigger goes.
INSERT INTO search_pending (node_id) SELECT n.id FROM nodes n
  WHERE NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'trigger'
                    AND name = 'search_node_written')
    AND NOT EXISTS (SELECT 1 FROM search_entries e WHERE e.entity = n.id);
DROP TRIGGER IF EXISTS search_node_written;
