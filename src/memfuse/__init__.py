"""memfuse: one lifecycle for an agent's Markdown memory and its agent-memory store."""

__version__ = "0.1.0"
