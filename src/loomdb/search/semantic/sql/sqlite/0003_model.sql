-- Each vector carries the id of the model that made it, so a store embedded by another
-- model is re-embedded (its entries queued again) on its next semantic query. Vectors
-- written before this carried no id: all-MiniLM-L6-v2 on torch made them.
ALTER TABLE search_vectors ADD COLUMN model TEXT NOT NULL DEFAULT 'all-MiniLM-L6-v2';
CREATE INDEX search_vectors_by_model ON search_vectors (model);
