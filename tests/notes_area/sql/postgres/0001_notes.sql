CREATE TABLE notes (node_id text NOT NULL, note text NOT NULL);
CREATE INDEX notes_node ON notes (node_id);
