-- Library documents can be forgotten with their site (soft, undoable, like facts): forget sets
-- invalid_at and the batch on a document and its chunks when the person chooses to forget the
-- site's saved pages too; undo clears exactly that batch. The visibility rule reads invalid_at.
ALTER TABLE documents ADD COLUMN invalid_at REAL;
ALTER TABLE documents ADD COLUMN forget_batch TEXT;
ALTER TABLE document_chunks ADD COLUMN invalid_at REAL;
ALTER TABLE document_chunks ADD COLUMN forget_batch TEXT;
CREATE INDEX documents_forget_batch ON documents(forget_batch) WHERE forget_batch IS NOT NULL;
CREATE INDEX document_chunks_forget_batch ON document_chunks(forget_batch) WHERE forget_batch IS NOT NULL;
ALTER TABLE forget_batches ADD COLUMN documents_forgotten INTEGER NOT NULL DEFAULT 0;

-- Library documents keep the page's structure: the extraction's Markdown (headings, lists,
-- tables, code, links) beside `text`, which stays what search indexes. Documents saved before
-- this migration, and text-lane ones, have none (readers fall back to the text).
ALTER TABLE documents ADD COLUMN markdown TEXT;
