CREATE TABLE kinds_rows (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  flag BOOLEAN NOT NULL,
  data BLOB,
  label TEXT,
  score REAL
);
CREATE TABLE kinds_marks (
  id INTEGER PRIMARY KEY,
  row_id INTEGER NOT NULL REFERENCES kinds_rows (id),
  note TEXT NOT NULL
);
CREATE TABLE kinds_pairs (
  a TEXT NOT NULL,
  b INTEGER NOT NULL,
  v TEXT,
  PRIMARY KEY (a, b)
) WITHOUT ROWID;
CREATE TABLE kinds_draft (note TEXT, n INTEGER);
