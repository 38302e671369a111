-- A user redacts their own copies of a content, not everyone's: the nodes of their
-- trees read as the tombstone (they hold neither a body nor a pointer to one) while
-- another user's node with the same content keeps it. `redactions` notes such a node
-- by its id (kind `node`), so the verifier tells that redaction from tampering too.
CREATE TABLE redactions_v7 (
  item TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('content', 'generation', 'node')),
  at TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO redactions_v7 (item, kind, at) SELECT item, kind, at FROM redactions;
DROP TABLE redactions;
ALTER TABLE redactions_v7 RENAME TO redactions;
