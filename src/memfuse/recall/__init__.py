"""Finding what the agent asks for: the local index of the Markdown, the external reranker."""
