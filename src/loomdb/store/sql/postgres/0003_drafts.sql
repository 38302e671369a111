-- Buffer mode's working buffer (seed 003): the uncommitted tail of a document, one per
-- session or view. As in sql/sqlite/0003_drafts.sql. Keyed by the ref name, like
-- `refs`, `ref_selections` and `ref_log`, so it can be distributed (and co-located)
-- with them by name.

CREATE TABLE IF NOT EXISTS drafts (
  ref_name text COLLATE "C" NOT NULL,
  text text NOT NULL,
  updated_at text COLLATE "C" NOT NULL,
  PRIMARY KEY (ref_name)
);
