-- Nothing to change: SQLite compares text byte by byte already. PostgreSQL's script of
-- the same name puts the name columns in byte order (COLLATE "C") to match.
SELECT 1;
