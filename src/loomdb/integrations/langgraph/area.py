"""The LangGraph area: its tables (`sql/<dialect>/`) and its hooks."""

from ...store.areas import Area

LANGGRAPH = Area("langgraph", "loomdb.integrations.langgraph",
                 hooks="loomdb.integrations.langgraph.hooks:HOOKS")
