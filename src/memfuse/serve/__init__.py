"""`memfuse serve`'s engine: the tools' calls answered over a warm index and store session
(service), their answers bounded and rendered (answers), the `note` write (note)."""
