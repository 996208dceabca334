"""The `memfuse` command: typer wiring (app.py) and one module per group of subcommands, each
registering its own. Importing the package registers every subcommand, in the order `memfuse
--help` lists them: the daily lifecycle, the answers, running it unattended."""

# Each module registers its commands as it is imported, in this order.
from memfuse.cli import lifecycle  # noqa: F401

# isort: split
from memfuse.cli import answers  # noqa: F401

# isort: split
from memfuse.cli import running  # noqa: F401
from memfuse.cli.app import app, main

__all__ = ["app", "main"]
