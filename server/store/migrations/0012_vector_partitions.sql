-- Partitions of the vectors (server.meaning.partitions): a search by meaning scans only the
-- vectors of the partitions nearest to the query. `vector_partitions` holds one model's k-means
-- centroids (float32, DIMS of them); `vectors.part` the vector's nearest centroid, NULL until it
-- is assigned (a store from before this migration: in the background, in batches; the index
-- scans an unassigned vector on every query meanwhile). Adding a column rewrites no row.
CREATE TABLE vector_partitions (
  model TEXT NOT NULL,
  part INTEGER NOT NULL,
  centroid BLOB NOT NULL,
  PRIMARY KEY (model, part)
) WITHOUT ROWID;

ALTER TABLE vectors ADD COLUMN part INTEGER;
