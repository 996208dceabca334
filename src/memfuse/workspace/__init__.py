"""The agent's workspace: its layout and the Markdown in every form memfuse reads or writes
(journals, weekly roll-ups, archived days, MEMORY.md, RECENT.md), read and written only
through the confined file access of `confine`."""
