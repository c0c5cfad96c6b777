-- The second model's vectors (server.meaning.deep: all-MiniLM-L6-v2, 384 int8 each, one per fact
-- or library chunk, from its first 128 tokens). Like `vectors`, an index of its item holding no
-- provenance of its own: read only by the ids of candidates that are then read through the
-- visibility rule. It reranks the static model's candidates; an item without one yet is ranked
-- by the static model alone. Keyed by the item's own id (the rowid): a search reads 600 of them
-- by id, one B-tree lookup each.
CREATE TABLE deep_fact_vectors (
  fact_id INTEGER PRIMARY KEY REFERENCES facts(id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  vec BLOB NOT NULL
);
CREATE TABLE deep_chunk_vectors (
  chunk_id INTEGER PRIMARY KEY REFERENCES document_chunks(id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  vec BLOB NOT NULL
);

-- What the second model has still to embed: every item of a store from before it (built in the
-- background, after the static model's queue, resumably), then each new or changed item.
CREATE TABLE deep_queue (
  item TEXT NOT NULL CHECK (item IN ('fact', 'chunk')),
  id INTEGER NOT NULL,
  PRIMARY KEY (item, id)
) WITHOUT ROWID;

INSERT INTO deep_queue(item, id) SELECT 'fact', id FROM facts;
INSERT INTO deep_queue(item, id) SELECT 'chunk', id FROM document_chunks;

CREATE TRIGGER facts_deep_ai AFTER INSERT ON facts BEGIN
  INSERT OR IGNORE INTO deep_queue(item, id) VALUES ('fact', new.id);
END;

CREATE TRIGGER facts_deep_au AFTER UPDATE OF title, text ON facts BEGIN
  DELETE FROM deep_fact_vectors WHERE fact_id = old.id;
  INSERT OR IGNORE INTO deep_queue(item, id) VALUES ('fact', new.id);
END;

CREATE TRIGGER document_chunks_deep_ai AFTER INSERT ON document_chunks BEGIN
  INSERT OR IGNORE INTO deep_queue(item, id) VALUES ('chunk', new.id);
END;

CREATE TRIGGER document_chunks_deep_au AFTER UPDATE OF text, search_title ON document_chunks BEGIN
  DELETE FROM deep_chunk_vectors WHERE chunk_id = old.id;
  INSERT OR IGNORE INTO deep_queue(item, id) VALUES ('chunk', new.id);
END;
