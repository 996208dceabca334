"""A reference agent-memory-compatible MCP server, for demos and tests (docs/architecture.md,
"The reference server"). Run: `python -m memfuse.refserver`."""
