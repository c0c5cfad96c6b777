-- Captured chat turns keep their Markdown (GFM: code fences, tables, lists, math as TeX) next to
-- the plain text. `text` stays what search indexes and captures compare; rows stored before this
-- migration keep their text and have no Markdown (readers fall back to the text).
ALTER TABLE facts ADD COLUMN markdown TEXT;
