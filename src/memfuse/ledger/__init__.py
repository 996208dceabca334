"""What memfuse has put into the store (the sync ledger), and the store checked against it."""
