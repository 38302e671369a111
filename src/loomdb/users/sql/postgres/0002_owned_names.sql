-- Owners of documents and collections. Their names stay unique in the whole store (as
-- in the library); a user sees only the ones recorded here as theirs.
CREATE TABLE user_documents (
  document_id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id)
);
CREATE INDEX user_documents_user ON user_documents (user_id);
CREATE TABLE user_collections (
  collection_id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id)
);
CREATE INDEX user_collections_user ON user_collections (user_id);
