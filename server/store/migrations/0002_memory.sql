-- Memory: facts (notes, clips, captured chat turns) and the conversations turns belong to.
-- Every source_url / source_host / source_ref comes from server.provenance.stamp.
-- Times are epoch seconds; valid_at carries its granularity ('instant' or 'day').
-- Forgetting is soft: invalid_at (+ the forget batch that set it); every reader filters on it.

CREATE TABLE conversations (
  id INTEGER PRIMARY KEY,
  site TEXT NOT NULL DEFAULT '',      -- the chat site's registry id (chatgpt, claude, ...)
  source_url TEXT NOT NULL,
  source_host TEXT NOT NULL,
  source_ref TEXT NOT NULL,           -- the conversation's title
  created_at REAL NOT NULL,
  updated_at REAL NOT NULL,
  UNIQUE (source_url, site)
);

CREATE TABLE facts (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('note', 'clip', 'turn')),
  title TEXT NOT NULL DEFAULT '',
  text TEXT NOT NULL,
  source_url TEXT NOT NULL,
  source_host TEXT NOT NULL,
  source_ref TEXT NOT NULL,
  valid_at REAL NOT NULL,
  granularity TEXT NOT NULL CHECK (granularity IN ('instant', 'day')),
  created_at REAL NOT NULL,
  updated_at REAL NOT NULL,
  invalid_at REAL,
  forget_batch TEXT,
  conversation_id INTEGER REFERENCES conversations(id),
  position INTEGER,                   -- order of a turn in its conversation
  role TEXT CHECK (role IS NULL OR role IN ('user', 'assistant', 'system', 'tool')),
  native_id TEXT,                     -- the site's own id of a turn, when it has one
  -- searchtext.index_form(title) / index_form(text), stored only when they differ from
  -- title / text (they differ only where a possessive was folded), so the text is not kept twice.
  search_title TEXT,
  search_text TEXT
);
-- exact tier and probe: live facts of one page
CREATE INDEX facts_url ON facts(source_url, valid_at DESC) WHERE invalid_at IS NULL;
-- site tier: live facts of one host, newest first; forget (a suffix match) scans this index
CREATE INDEX facts_host ON facts(source_host, valid_at DESC) WHERE invalid_at IS NULL;
CREATE INDEX facts_conversation ON facts(conversation_id, position) WHERE conversation_id IS NOT NULL;
CREATE INDEX facts_forget_batch ON facts(forget_batch) WHERE forget_batch IS NOT NULL;

-- What FTS indexes: the indexed forms, falling back to the text itself.
CREATE VIEW facts_search AS
  SELECT id, COALESCE(search_title, title) AS title, COALESCE(search_text, text) AS body FROM facts;

-- External-content FTS5 (content = the view above), kept in sync by triggers on facts.
-- invalid_at is honoured by joining back to facts, never by deleting from the index.
CREATE VIRTUAL TABLE facts_fts USING fts5(
  title, body,
  content='facts_search', content_rowid='id',
  tokenize='porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER facts_ai AFTER INSERT ON facts BEGIN
  INSERT INTO facts_fts(rowid, title, body)
  VALUES (new.id, COALESCE(new.search_title, new.title), COALESCE(new.search_text, new.text));
END;

CREATE TRIGGER facts_ad AFTER DELETE ON facts BEGIN
  INSERT INTO facts_fts(facts_fts, rowid, title, body)
  VALUES ('delete', old.id, COALESCE(old.search_title, old.title), COALESCE(old.search_text, old.text));
END;

CREATE TRIGGER facts_au AFTER UPDATE OF title, text, search_title, search_text ON facts BEGIN
  INSERT INTO facts_fts(facts_fts, rowid, title, body)
  VALUES ('delete', old.id, COALESCE(old.search_title, old.title), COALESCE(old.search_text, old.text));
  INSERT INTO facts_fts(rowid, title, body)
  VALUES (new.id, COALESCE(new.search_title, new.title), COALESCE(new.search_text, new.text));
END;

-- Forget batches, so that an undo restores exactly what one forget hid.
CREATE TABLE forget_batches (
  id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  at REAL NOT NULL,
  facts INTEGER NOT NULL,
  documents INTEGER NOT NULL,
  undone_at REAL
);
