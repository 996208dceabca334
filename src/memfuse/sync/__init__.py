"""sync's engine: repair the ledger, read the journals, plan (pure), apply (the only writer)."""
