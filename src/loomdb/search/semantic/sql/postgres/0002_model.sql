-- Each vector carries the id of the model that made it (see the SQLite script).
ALTER TABLE search_vectors ADD COLUMN model text NOT NULL DEFAULT 'all-MiniLM-L6-v2';
CREATE INDEX search_vectors_by_model ON search_vectors (model);
