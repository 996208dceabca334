"""Setting memfuse up: doctor's checks (memfuse.setup.checks) and the server entry it writes
(memfuse.setup.entry), the engines under `memfuse doctor`."""
