"""loomdb under agent frameworks: each framework's own storage seam, implemented on a
loomdb store so that what the framework keeps is also a tree every loomdb tool reads.

* `loomdb.integrations.langgraph`: `LoomSaver` / `AsyncLoomSaver`, LangGraph's
  checkpointer (`pip install 'loomdb[langgraph]'`);
* `loomdb.integrations.claude_agent_sdk`: `LoomSessionStore`, the Claude Agent SDK's
  session store (`pip install 'loomdb[claude-agent-sdk]'`).

An integration is an adapter at the top of the layers, like an edge: it opens a store
through the library (`loomdb.open`) and calls its public operations; what it keeps of
its own (checkpoints, transcript lines) is an area with its own tables and migrations
(`loomdb.store.areas`), its SQL in its `storage` module. Its package imports the
framework only where a class needs it, so a store copy that meets its area's tables
reads their migrations without the framework installed.
"""
