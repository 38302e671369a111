-- Buffer documents the gateway has seen: a document (a buffer tree's path text) up to
-- the end of one node, found from a prompt by its first characters and its length.
CREATE TABLE gateway_buffers (
  head text NOT NULL,
  length integer NOT NULL,
  digest text NOT NULL,
  tree_id text NOT NULL,
  node_id text NOT NULL,
  PRIMARY KEY (head, length, digest, tree_id)
);
