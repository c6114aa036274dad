-- Captured from PostgreSQL 15's statement log (log_statement = all) while
-- psycopg 3.1.7 (Debian): TypeInfo.fetch(conn, "bigint") (server-side $1 parameter)
-- ran against a PostgreSQL 15 holding adult and pums. {{adult_oid}} stands for
-- the OID the client read from an earlier answer.

-- query: psycopg_typeinfo
SELECT
    typname AS name, oid, typarray AS array_oid,
    oid::regtype::text AS regtype, typdelim AS delimiter
FROM pg_type t
WHERE t.oid = $1::regtype
ORDER BY t.oid;
