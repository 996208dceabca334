"""A reference agent-memory-compatible MCP server, for demos and tests.

It is a stand-in for the real server (npm `@smyslenny/agent-memory` 2.2): the same tool names,
argument schemas, JSON answers and guard semantics for the tools memfuse uses, on SQLite at
`$AGENT_MEMORY_DB`. Retrieval is a plain BM25 (no embeddings). Run: `python -m memfuse.refserver`.
"""
