"""loomdb as an MCP server: any MCP client (an agent, a desktop assistant) uses the
store as its memory over stdio. See `server.py`."""
