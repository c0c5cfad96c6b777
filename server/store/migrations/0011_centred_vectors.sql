-- The embedding model's vectors changed (server.meaning.model: the token table is centred, so
-- text of everyday words no longer sits near every query): every item embedded by an older
-- model is queued again. Its old vectors keep serving until the embedder replaces them, item by
-- item, in the transaction that also empties its queue row, so a kill -9 loses nothing and the
-- meaning lane works throughout the rebuild; lexical search never waits for it.
INSERT OR IGNORE INTO embed_queue(item, id)
  SELECT DISTINCT 'fact', fact_id FROM vectors
  WHERE fact_id IS NOT NULL AND model != 'wordllama-l2_supercat-256-centred';
INSERT OR IGNORE INTO embed_queue(item, id)
  SELECT DISTINCT 'chunk', chunk_id FROM vectors
  WHERE chunk_id IS NOT NULL AND model != 'wordllama-l2_supercat-256-centred';
