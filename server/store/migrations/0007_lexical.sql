-- The vocabularies of both full-text indexes (term -> how many rows hold it), read by search's
-- spelling correction (server/memory/typos.py). fts5vocab tables store nothing: they read the
-- index itself, so they never need rebuilding.
CREATE VIRTUAL TABLE facts_fts_vocab USING fts5vocab(facts_fts, 'row');
CREATE VIRTUAL TABLE document_chunks_fts_vocab USING fts5vocab(document_chunks_fts, 'row');
