-- Core tables owned by the foundation: site rules and the activity log.
CREATE TABLE site_rules (
  host TEXT PRIMARY KEY,
  mode TEXT NOT NULL CHECK (mode IN ('off', 'suggest', 'collect')),
  updated_at REAL NOT NULL
);

CREATE TABLE activity (
  id INTEGER PRIMARY KEY,
  at REAL NOT NULL,
  kind TEXT NOT NULL,
  summary TEXT NOT NULL,
  source_url TEXT,
  source_host TEXT,
  detail TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX activity_at ON activity(at DESC);

-- Idempotency keys for writes the extension's outbox may re-send.
CREATE TABLE idempotency (
  key TEXT PRIMARY KEY,
  route TEXT NOT NULL,
  status INTEGER NOT NULL,
  response TEXT NOT NULL,
  at REAL NOT NULL
);
