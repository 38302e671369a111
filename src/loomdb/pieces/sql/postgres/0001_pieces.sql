-- Prompt pieces: named texts (system prompts, rubrics, documents) and templates, each a
-- line of versions over the shared content layer. A version names its content by
-- content id; the body lives in the core (when a node holds the same content) or in
-- piece_contents, once per content whatever the number of pieces, versions and threads.
CREATE TABLE piece_pieces (
  id text PRIMARY KEY,
  name text COLLATE "C" NOT NULL UNIQUE,
  kind text NOT NULL CHECK (kind IN ('piece', 'template')),
  owner text,
  created_at text NOT NULL
);
CREATE INDEX piece_pieces_owner ON piece_pieces (owner);
CREATE TABLE piece_versions (
  piece_id text NOT NULL,
  number integer NOT NULL,
  content_id text NOT NULL,
  created_at text NOT NULL,
  PRIMARY KEY (piece_id, number)
);
CREATE INDEX piece_versions_content ON piece_versions (content_id);
CREATE TABLE piece_contents (
  id text PRIMARY KEY,
  body text NOT NULL,
  created_at text NOT NULL
);
-- which nodes name a piece (a block, or a system piece in their options): `used-by`
CREATE TABLE piece_uses (
  piece_id text NOT NULL,
  node_id text NOT NULL,
  tree_id text NOT NULL,
  PRIMARY KEY (piece_id, node_id)
);
CREATE INDEX piece_uses_tree ON piece_uses (tree_id);
