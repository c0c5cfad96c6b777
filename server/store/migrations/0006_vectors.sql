-- Search by meaning (server.meaning): vectors of facts and library chunks, in this file.
-- A vector row holds no provenance of its own: it is an index of its item (like the FTS tables),
-- read only joined back to the item, whose stamped source columns and visibility rule apply.
-- A long item has up to four vectors (seq: its windows). `bits` (32 bytes: the signs) is what
-- the in-memory index scans; `vec` (256 int8, scaled to the vector's largest component) reranks.
CREATE TABLE vectors (
  id INTEGER PRIMARY KEY,
  fact_id INTEGER REFERENCES facts(id) ON DELETE CASCADE,
  chunk_id INTEGER REFERENCES document_chunks(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  model TEXT NOT NULL,
  bits BLOB NOT NULL,
  vec BLOB NOT NULL,
  CHECK ((fact_id IS NULL) != (chunk_id IS NULL))
);
CREATE UNIQUE INDEX vectors_fact ON vectors(fact_id, seq) WHERE fact_id IS NOT NULL;
CREATE UNIQUE INDEX vectors_chunk ON vectors(chunk_id, seq) WHERE chunk_id IS NOT NULL;

-- What still needs embedding: filled by the triggers below (and, for a store that predates
-- this migration, with every item now), emptied by the embedder in the same transaction that
-- writes the item's vectors, so a kill -9 loses nothing and repeats nothing.
CREATE TABLE embed_queue (
  item TEXT NOT NULL CHECK (item IN ('fact', 'chunk')),
  id INTEGER NOT NULL,
  PRIMARY KEY (item, id)
) WITHOUT ROWID;

INSERT INTO embed_queue(item, id) SELECT 'fact', id FROM facts;
INSERT INTO embed_queue(item, id) SELECT 'chunk', id FROM document_chunks;

CREATE TRIGGER facts_embed_ai AFTER INSERT ON facts BEGIN
  INSERT OR IGNORE INTO embed_queue(item, id) VALUES ('fact', new.id);
END;

CREATE TRIGGER facts_embed_au AFTER UPDATE OF title, text ON facts BEGIN
  DELETE FROM vectors WHERE fact_id = old.id;
  INSERT OR IGNORE INTO embed_queue(item, id) VALUES ('fact', new.id);
END;

CREATE TRIGGER document_chunks_embed_ai AFTER INSERT ON document_chunks BEGIN
  INSERT OR IGNORE INTO embed_queue(item, id) VALUES ('chunk', new.id);
END;

CREATE TRIGGER document_chunks_embed_au AFTER UPDATE OF text, search_title ON document_chunks BEGIN
  DELETE FROM vectors WHERE chunk_id = old.id;
  INSERT OR IGNORE INTO embed_queue(item, id) VALUES ('chunk', new.id);
END;
