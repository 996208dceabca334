"""One run of a command: its lifecycle (runner), what it works with (context), its result,
the lines people read, the run history and its alarms, and the workspace lock."""
