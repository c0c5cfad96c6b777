"""Search by meaning: the embedding model, the vectors table and its in-memory index."""
