"""One module per subcommand: each takes a RunContext and returns a CommandResult."""
