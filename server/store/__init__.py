"""Storage: one SQLite file (WAL), named migrations, FTS5."""
