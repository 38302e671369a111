-- Documents: a revision DAG per document over the shared content layer.
-- A revision names its content by content id; the body lives in the core (when a node
-- holds the same content) or in doc_contents (text only ever written as a document).
CREATE TABLE doc_documents (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  current_branch TEXT,
  current_rev TEXT,
  created_at TEXT NOT NULL
);
CREATE TABLE doc_revisions (
  id TEXT PRIMARY KEY,
  document_id TEXT NOT NULL,
  content_id TEXT NOT NULL,
  message TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX doc_revisions_document ON doc_revisions (document_id, id);
CREATE INDEX doc_revisions_content ON doc_revisions (content_id);
CREATE TABLE doc_parents (
  revision_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  parent_id TEXT NOT NULL,
  PRIMARY KEY (revision_id, position)
);
CREATE TABLE doc_branches (
  document_id TEXT NOT NULL,
  name TEXT NOT NULL,
  head TEXT NOT NULL,
  PRIMARY KEY (document_id, name)
);
CREATE TABLE doc_contents (
  id TEXT PRIMARY KEY,
  body TEXT NOT NULL,
  created_at TEXT NOT NULL
);
