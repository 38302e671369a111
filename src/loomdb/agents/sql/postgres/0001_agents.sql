-- The agents area: identities, personas, session bindings, tool calls awaiting a
-- decision, spawned subagents and supervised messages. It refers to core nodes, trees
-- and sessions by id or name only; the core's tables are never touched from here.
CREATE TABLE agents (
  name text PRIMARY KEY,
  kind text NOT NULL,
  persona text,
  created_at text NOT NULL
);
CREATE TABLE agent_personas (
  name text PRIMARY KEY,
  spec text NOT NULL,
  updated_at text NOT NULL
);
CREATE TABLE agent_sessions (
  session text PRIMARY KEY,
  persona text,
  agent text,
  updated_at text NOT NULL
);
CREATE INDEX agent_sessions_persona ON agent_sessions (persona, updated_at);
CREATE TABLE agent_tool_calls (
  node text PRIMARY KEY,
  call_id text NOT NULL,
  tree text NOT NULL,
  tool text NOT NULL,
  input text NOT NULL,
  state text NOT NULL,
  run text NOT NULL,
  result_node text,
  decided_by text,
  reason text,
  created_at text NOT NULL,
  updated_at text NOT NULL
);
CREATE INDEX agent_tool_calls_state ON agent_tool_calls (state, created_at);
CREATE TABLE agent_spawns (
  child_tree text PRIMARY KEY,
  parent_tree text NOT NULL,
  parent_node text NOT NULL,
  session text NOT NULL,
  task text NOT NULL,
  summary_node text,
  created_at text NOT NULL
);
CREATE INDEX agent_spawns_parent ON agent_spawns (parent_node);
CREATE TABLE agent_messages (
  id text PRIMARY KEY,
  from_session text NOT NULL,
  from_node text NOT NULL,
  to_session text NOT NULL,
  sender text NOT NULL,
  supervisor text NOT NULL,
  text text NOT NULL,
  original text NOT NULL,
  state text NOT NULL,
  reason text,
  node text,
  created_at text NOT NULL,
  decided_at text
);
CREATE INDEX agent_messages_inbox ON agent_messages (supervisor, state, created_at);
