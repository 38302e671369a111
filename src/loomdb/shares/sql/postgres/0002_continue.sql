-- Whether a link lets a signed-in reader continue the shared path, and one grant per
-- fork made so (see the sqlite script: the fork reads the path through this row).
ALTER TABLE shares ADD COLUMN allow_continue integer NOT NULL DEFAULT 0;
CREATE TABLE share_forks (
  tree_id text PRIMARY KEY,
  share_id text NOT NULL,
  source_tree text NOT NULL,
  source_node text NOT NULL,
  user_id text,
  created_at text NOT NULL
);
CREATE INDEX share_forks_share ON share_forks (share_id);
