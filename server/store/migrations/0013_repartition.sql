-- Until this version a restart did not load the partitions' centroids (server.meaning.embedder
-- returned before partitions.load): each start of a store with enough vectors trained new
-- centroids and kept the vectors' partition numbers from the old ones, so a query by meaning
-- scanned partitions that did not hold its nearest vectors. The centroids and every vector's
-- partition are dropped here: the next start trains once and assigns every vector in the
-- background, resumably (server.meaning.partitions); later starts load them.
UPDATE vectors SET part = NULL WHERE part IS NOT NULL;
DELETE FROM vector_partitions;
