"""agent-memory, spoken to in one voice: the typed client, the transports beneath it (gateway),
the generations 2.x–5.x, and the decay model the store applies."""
