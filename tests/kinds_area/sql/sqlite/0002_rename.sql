ALTER TABLE kinds_draft RENAME TO kinds_loose;
