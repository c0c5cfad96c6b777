-- Who wrote a note: NULL is the person (the extension, the CLI), 'mcp' an agent through
-- `wherefrom mcp --allow-writes`. Shown beside the note in the panel, the export and MCP.
ALTER TABLE facts ADD COLUMN via TEXT CHECK (via IS NULL OR via IN ('mcp'));
