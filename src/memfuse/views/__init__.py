"""The read-only views of the lifecycle: `status` (views/status.py) and a bullet's story,
`where` (views/where.py). Each is a flow of a RunContext or a serve Call returning its
CommandResult; the commands of those names and serve's tools of those names run it."""
