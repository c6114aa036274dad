-- Startup and metadata statements of BI tools (Metabase and Superset run
-- these through pgjdbc and SQLAlchemy, whose own metadata queries are in
-- pgjdbc.sql and sqlalchemy.sql), as listed in issue 3, plus the plain
-- information_schema reads such tools and hand-written scripts use.

-- query: bi_version
select pg_catalog.version();

-- query: bi_current_schema
select current_schema();

-- query: bi_server_version_num
SELECT current_setting('server_version_num');

-- query: bi_current_user
SELECT current_user, current_database(), session_user;

-- query: bi_info_tables
SELECT table_schema, table_name, table_type FROM information_schema.tables
WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY table_schema, table_name;

-- query: bi_info_columns
SELECT column_name, data_type, is_nullable, ordinal_position FROM information_schema.columns
WHERE table_schema = 'public' AND table_name = 'adult' ORDER BY ordinal_position;

-- query: bi_info_schemata
SELECT schema_name FROM information_schema.schemata ORDER BY schema_name;

-- query: bi_privileges
SELECT n.nspname, c.relname, has_table_privilege(c.oid, 'SELECT') AS can_select,
       has_table_privilege(c.oid, 'INSERT') AS can_insert
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND has_schema_privilege(n.nspname, 'USAGE') ORDER BY c.relname;
