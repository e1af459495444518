"""Package data: the tables (device profiles, error codes, knowledge base, ...) as JSON."""
