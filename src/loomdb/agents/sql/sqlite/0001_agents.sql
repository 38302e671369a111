-- The agents area: identities, personas, session bindings, tool calls awaiting a
-- decision, spawned subagents and supervised messages. It refers to core nodes, trees
-- and sessions by id or name only; the core's tables are never touched from here.
CREATE TABLE agents (
  name TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  persona TEXT,
  created_at TEXT NOT NULL
);
CREATE TABLE agent_personas (
  name TEXT PRIMARY KEY,
  spec TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE agent_sessions (
  session TEXT PRIMARY KEY,
  persona TEXT,
  agent TEXT,
  updated_at TEXT NOT NULL
);
CREATE INDEX agent_sessions_persona ON agent_sessions (persona, updated_at);
CREATE TABLE agent_tool_calls (
  node TEXT PRIMARY KEY,
  call_id TEXT NOT NULL,
  tree TEXT NOT NULL,
  tool TEXT NOT NULL,
  input TEXT NOT NULL,
  state TEXT NOT NULL,
  run TEXT NOT NULL,
  result_node TEXT,
  decided_by TEXT,
  reason TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX agent_tool_calls_state ON agent_tool_calls (state, created_at);
CREATE TABLE agent_spawns (
  child_tree TEXT PRIMARY KEY,
  parent_tree TEXT NOT NULL,
  parent_node TEXT NOT NULL,
  session TEXT NOT NULL,
  task TEXT NOT NULL,
  summary_node TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX agent_spawns_parent ON agent_spawns (parent_node);
CREATE TABLE agent_messages (
  id TEXT PRIMARY KEY,
  from_session TEXT NOT NULL,
  from_node TEXT NOT NULL,
  to_session TEXT NOT NULL,
  sender TEXT NOT NULL,
  supervisor TEXT NOT NULL,
  text TEXT NOT NULL,
  original TEXT NOT NULL,
  state TEXT NOT NULL,
  reason TEXT,
  node TEXT,
  created_at TEXT NOT NULL,
  decided_at TEXT
);
CREATE INDEX agent_messages_inbox ON agent_messages (supervisor, state, created_at);
