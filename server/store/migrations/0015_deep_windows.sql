-- The second model now reads an item in windows of 128 tokens (up to four, one blob: server.meaning.deep);
-- before, only its first 128 tokens. Items long enough to have a second window are read again, in
-- the background; their one-window vector serves until then.
INSERT OR IGNORE INTO deep_queue(item, id) SELECT 'fact', id FROM facts WHERE length(title) + length(text) > 400;
INSERT OR IGNORE INTO deep_queue(item, id) SELECT 'chunk', id FROM document_chunks WHERE length(text) > 400;
