"""Pure text logic: the keyword classifier, similarity, and statements compared."""
