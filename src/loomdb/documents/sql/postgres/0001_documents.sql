-- Documents: a revision DAG per document over the shared content layer.
-- A revision names its content by content id; the body lives in the core (when a node
-- holds the same content) or in doc_contents (text only ever written as a document).
CREATE TABLE doc_documents (
  id text PRIMARY KEY,
  name text NOT NULL UNIQUE,
  current_branch text,
  current_rev text,
  created_at text NOT NULL
);
CREATE TABLE doc_revisions (
  id text PRIMARY KEY,
  document_id text NOT NULL,
  content_id text NOT NULL,
  message text NOT NULL,
  created_at text NOT NULL
);
CREATE INDEX doc_revisions_document ON doc_revisions (document_id, id);
CREATE INDEX doc_revisions_content ON doc_revisions (content_id);
CREATE TABLE doc_parents (
  revision_id text NOT NULL,
  position integer NOT NULL,
  parent_id text NOT NULL,
  PRIMARY KEY (revision_id, position)
);
CREATE TABLE doc_branches (
  document_id text NOT NULL,
  name text NOT NULL,
  head text NOT NULL,
  PRIMARY KEY (document_id, name)
);
CREATE TABLE doc_contents (
  id text PRIMARY KEY,
  body text NOT NULL,
  created_at text NOT NULL
);
