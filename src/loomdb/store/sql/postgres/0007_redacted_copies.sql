-- A user redacts their own copies of a content, not everyone's: the nodes of their
-- trees carry the flag REDACTED_COPY (4) and read as the tombstone while another
-- user's node with the same content keeps it. `redactions` notes such a node by its
-- id (kind `node`), so the verifier tells that redaction from tampering too.
ALTER TABLE redactions DROP CONSTRAINT redactions_kind_check;
ALTER TABLE redactions ADD CONSTRAINT redactions_kind_check
  CHECK (kind IN ('content', 'generation', 'node'));
