-- The Claude Agent SDK's session store (loomdb.integrations.claude_agent_sdk): each
-- transcript the SDK mirrors (a session's main transcript, subpath '', or a subagent's)
-- is a row of cc_sessions, its entries the rows of cc_entries in the order appended,
-- each the entry's JSON text, or for an entry a fork copied from another session the
-- fields it changed (base_session, base_seq name the entry it copied). The session is
-- also the tree a Claude Code import makes of the same lines (tree_id); a fork is a
-- session ref in its source's tree (fork_ref), its own messages a branch there
-- (fork_nodes: the first node of each).
CREATE TABLE cc_sessions (
  key INTEGER PRIMARY KEY,
  project_key TEXT NOT NULL,
  session_id TEXT NOT NULL,
  subpath TEXT NOT NULL,
  mtime INTEGER NOT NULL,
  summary TEXT,
  tree_id TEXT,
  fork_ref TEXT,
  fork_nodes TEXT,
  problem TEXT,
  UNIQUE (project_key, session_id, subpath)
);
CREATE INDEX cc_sessions_tree ON cc_sessions (tree_id);
CREATE TABLE cc_entries (
  session INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  uuid TEXT,
  base_session INTEGER,
  base_seq INTEGER,
  entry TEXT NOT NULL,
  PRIMARY KEY (session, seq)
) WITHOUT ROWID;
CREATE UNIQUE INDEX cc_entries_uuid ON cc_entries (session, uuid) WHERE uuid IS NOT NULL;
CREATE INDEX cc_entries_base ON cc_entries (base_session) WHERE base_session IS NOT NULL;
