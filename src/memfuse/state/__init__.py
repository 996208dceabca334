"""memfuse's own state folder and the private files in it."""
