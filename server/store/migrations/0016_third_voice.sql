-- The third voice's vectors (server.meaning.third: multilingual-e5-small, 384 int8 a window, its
-- windows the second model's), only of the items the second model does not read (a Dutch note, a
-- Japanese chat): an English question finds them by meaning. Like deep_*_vectors, an index of its
-- item holding no provenance of its own, read only by the ids of candidates whose items are then
-- read through the visibility rule; deleted with its item.
CREATE TABLE e5_fact_vectors (
  fact_id INTEGER PRIMARY KEY REFERENCES facts(id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  vec BLOB NOT NULL
);
CREATE TABLE e5_chunk_vectors (
  chunk_id INTEGER PRIMARY KEY REFERENCES document_chunks(id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  vec BLOB NOT NULL
);

-- What it has still to decide (and embed, when the second model does not read the item): every item
-- of a store from before it, built in the background after the second model's queue, resumably;
-- then each new or changed item (a changed item is decided again: its vector goes meanwhile).
CREATE TABLE e5_queue (
  item TEXT NOT NULL CHECK (item IN ('fact', 'chunk')),
  id INTEGER NOT NULL,
  PRIMARY KEY (item, id)
) WITHOUT ROWID;

INSERT INTO e5_queue(item, id) SELECT 'fact', id FROM facts;
INSERT INTO e5_queue(item, id) SELECT 'chunk', id FROM document_chunks;

CREATE TRIGGER facts_e5_ai AFTER INSERT ON facts BEGIN
  INSERT OR IGNORE INTO e5_queue(item, id) VALUES ('fact', new.id);
END;

CREATE TRIGGER facts_e5_au AFTER UPDATE OF title, text ON facts BEGIN
  DELETE FROM e5_fact_vectors WHERE fact_id = old.id;
  INSERT OR IGNORE INTO e5_queue(item, id) VALUES ('fact', new.id);
END;

CREATE TRIGGER document_chunks_e5_ai AFTER INSERT ON document_chunks BEGIN
  INSERT OR IGNORE INTO e5_queue(item, id) VALUES ('chunk', new.id);
END;

CREATE TRIGGER document_chunks_e5_au AFTER UPDATE OF text, search_title ON document_chunks BEGIN
  DELETE FROM e5_chunk_vectors WHERE chunk_id = old.id;
  INSERT OR IGNORE INTO e5_queue(item, id) VALUES ('chunk', new.id);
END;
