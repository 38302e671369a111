CREATE TABLE notes (node_id TEXT NOT NULL, note TEXT NOT NULL);
CREATE INDEX notes_node ON notes (node_id);
