-- The library: saved documents and their document-mode chunks (never facts).
-- A document's identity is its normalised URL (server.urls.normalise_url, via provenance.stamp);
-- the URL as given and the page's own canonical URL are kept beside it, never in its place.
CREATE TABLE documents (
  id INTEGER PRIMARY KEY,
  source_url TEXT NOT NULL UNIQUE,   -- normalised, the identity of "the same page"
  source_host TEXT NOT NULL,
  source_ref TEXT NOT NULL,          -- the title (capped by provenance.stamp)
  given_url TEXT NOT NULL,           -- the URL exactly as it was given
  canonical_url TEXT,                -- the page's <link rel=canonical> / og:url, as declared
  title TEXT NOT NULL DEFAULT '',
  author TEXT,
  published TEXT,                    -- the date the page declares (YYYY-MM-DD), as text
  sitename TEXT,
  language TEXT,
  text TEXT NOT NULL,
  text_sha256 TEXT NOT NULL,
  lane TEXT NOT NULL CHECK (lane IN ('url', 'text')),
  extractor TEXT NOT NULL CHECK (extractor IN ('trafilatura', 'fallback', 'text')),
  created_at REAL NOT NULL,
  updated_at REAL NOT NULL           -- last time the text was (re)written
);
CREATE INDEX documents_host ON documents(source_host);
CREATE INDEX documents_updated ON documents(updated_at DESC);

CREATE TABLE document_chunks (
  id INTEGER PRIMARY KEY,
  document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  text TEXT NOT NULL,
  source_url TEXT NOT NULL,
  source_host TEXT NOT NULL,
  source_ref TEXT NOT NULL,
  search_title TEXT NOT NULL,        -- searchtext.index_form(title)
  search_text TEXT NOT NULL,         -- searchtext.index_form(text)
  UNIQUE (document_id, seq)
);

-- External-content FTS5 over the indexed forms, kept in sync by triggers.
CREATE VIRTUAL TABLE document_chunks_fts USING fts5(
  search_title, search_text,
  content='document_chunks', content_rowid='id',
  tokenize='porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER document_chunks_ai AFTER INSERT ON document_chunks BEGIN
  INSERT INTO document_chunks_fts(rowid, search_title, search_text)
  VALUES (new.id, new.search_title, new.search_text);
END;

CREATE TRIGGER document_chunks_ad AFTER DELETE ON document_chunks BEGIN
  INSERT INTO document_chunks_fts(document_chunks_fts, rowid, search_title, search_text)
  VALUES ('delete', old.id, old.search_title, old.search_text);
END;

CREATE TRIGGER document_chunks_au AFTER UPDATE ON document_chunks BEGIN
  INSERT INTO document_chunks_fts(document_chunks_fts, rowid, search_title, search_text)
  VALUES ('delete', old.id, old.search_title, old.search_text);
  INSERT INTO document_chunks_fts(rowid, search_title, search_text)
  VALUES (new.id, new.search_title, new.search_text);
END;
