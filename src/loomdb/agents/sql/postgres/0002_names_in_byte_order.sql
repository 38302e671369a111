-- Names in byte order, as SQLite orders them (the recipe's COLLATE "C" rule, which the
-- first script left out): on a database whose default collation is a language's
-- (en_US, ICU), "alpha" sorted before "Beta" here and after it on SQLite.
ALTER TABLE agents ALTER COLUMN name TYPE text COLLATE "C";
ALTER TABLE agent_personas ALTER COLUMN name TYPE text COLLATE "C";
