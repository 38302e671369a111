CREATE TABLE kinds_rows (
  id bigserial PRIMARY KEY,
  flag boolean NOT NULL,
  data bytea,
  label text,
  score double precision
);
CREATE TABLE kinds_marks (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  row_id bigint NOT NULL REFERENCES kinds_rows (id),
  note text NOT NULL,
  shout text GENERATED ALWAYS AS (upper(note)) STORED
);
CREATE TABLE kinds_pairs (
  a text COLLATE "C" NOT NULL,
  b integer NOT NULL,
  v text,
  PRIMARY KEY (a, b)
);
CREATE TABLE kinds_draft (note text, n integer);
