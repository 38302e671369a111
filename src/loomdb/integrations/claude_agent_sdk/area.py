"""The Claude session store's area: its tables (`sql/<dialect>/`) and its hooks."""

from ...store.areas import Area

SESSIONS = Area("claude_sessions", "loomdb.integrations.claude_agent_sdk",
                hooks="loomdb.integrations.claude_agent_sdk.hooks:HOOKS")
