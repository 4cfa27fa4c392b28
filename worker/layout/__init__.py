"""The index's table layouts (which bits key each table, which keys a check probes), their
recall, and the planner that picks one for a threshold and an index size. Pure."""
