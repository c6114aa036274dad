package pgcatalog

import (
	"fmt"
	"strings"
)

// Schemas of the emulated catalog.
const (
	PGCatalog         = "pg_catalog"
	InformationSchema = "information_schema"
)

// Namespace OIDs: pg_catalog and public are fixed by PostgreSQL
// (pg_namespace.dat); information_schema's is whatever initdb gave it, here
// the value a PostgreSQL 15 cluster reports.
const (
	nsPGCatalog   uint32 = 11
	nsPublic      uint32 = 2200
	nsInfoSchema  uint32 = 13181
	ownerOID      uint32 = 10 // the bootstrap superuser, owner of everything
	sessionOID    uint32 = 16384
	firstUserOID  uint32 = 16385 // FirstNormalObjectId + 1
	defaultTblspc uint32 = 1663
)

// column is one column of an emulated relation.
type column struct {
	Name string
	Type pgType
}

// relation is one emulated catalog relation.
type relation struct {
	Schema string
	Name   string
	OID    uint32
	View   bool
	Cols   []column
	// session relations depend on who asks (pg_roles lists the connected
	// user); they are rendered per query instead of stored.
	session bool
}

// sqliteName is the relation's table in the SQLite database.
func (r *relation) sqliteName() string {
	if r.Schema == InformationSchema {
		return "information_schema_" + r.Name
	}
	return r.Name
}

// relationDefs lists the emulated relations: PostgreSQL 15's columns
// (catalogs.sgml) of the relations psql, pgjdbc, SQLAlchemy, psycopg and BI
// tools read. OIDs of the pg_catalog tables are PostgreSQL's own
// (pg_class.h and friends); views and information_schema get OIDs from a
// range of their own.
var relationDefs = []struct {
	schema, name string
	oid          uint32
	view         bool
	cols         string
}{
	{PGCatalog, "pg_namespace", 2615, false, "oid oid, nspname name, nspowner oid, nspacl _aclitem"},
	{PGCatalog, "pg_class", 1259, false, "oid oid, relname name, relnamespace oid, reltype oid, reloftype oid, relowner oid, relam oid, relfilenode oid, reltablespace oid, relpages int4, reltuples float4, relallvisible int4, reltoastrelid oid, relhasindex bool, relisshared bool, relpersistence char, relkind char, relnatts int2, relchecks int2, relhasrules bool, relhastriggers bool, relhassubclass bool, relrowsecurity bool, relforcerowsecurity bool, relispopulated bool, relreplident char, relispartition bool, relrewrite oid, relfrozenxid xid, relminmxid xid, relacl _aclitem, reloptions _text, relpartbound pg_node_tree"},
	{PGCatalog, "pg_attribute", 1249, false, "attrelid oid, attname name, atttypid oid, attstattarget int4, attlen int2, attnum int2, attndims int4, attcacheoff int4, atttypmod int4, attbyval bool, attalign char, attstorage char, attcompression char, attnotnull bool, atthasdef bool, atthasmissing bool, attidentity char, attgenerated char, attisdropped bool, attislocal bool, attinhcount int4, attcollation oid, attacl _aclitem, attoptions _text, attfdwoptions _text"},
	{PGCatalog, "pg_type", 1247, false, "oid oid, typname name, typnamespace oid, typowner oid, typlen int2, typbyval bool, typtype char, typcategory char, typispreferred bool, typisdefined bool, typdelim char, typrelid oid, typsubscript regproc, typelem oid, typarray oid, typinput regproc, typoutput regproc, typreceive regproc, typsend regproc, typmodin regproc, typmodout regproc, typanalyze regproc, typalign char, typstorage char, typnotnull bool, typbasetype oid, typtypmod int4, typndims int4, typcollation oid, typdefaultbin pg_node_tree, typdefault text, typacl _aclitem"},
	{PGCatalog, "pg_database", 1262, false, "oid oid, datname name, datdba oid, encoding int4, datlocprovider char, datistemplate bool, datallowconn bool, datconnlimit int4, datfrozenxid xid, datminmxid xid, dattablespace oid, datcollate text, datctype text, daticulocale text, datcollversion text, datacl _aclitem"},
	{PGCatalog, "pg_index", 2610, false, "indexrelid oid, indrelid oid, indnatts int2, indnkeyatts int2, indisunique bool, indnullsnotdistinct bool, indisprimary bool, indisexclusion bool, indimmediate bool, indisclustered bool, indisvalid bool, indcheckxmin bool, indisready bool, indislive bool, indisreplident bool, indkey int2vector, indcollation oidvector, indclass oidvector, indoption int2vector, indexprs pg_node_tree, indpred pg_node_tree"},
	{PGCatalog, "pg_description", 2609, false, "objoid oid, classoid oid, objsubid int4, description text"},
	{PGCatalog, "pg_attrdef", 2604, false, "oid oid, adrelid oid, adnum int2, adbin pg_node_tree"},
	{PGCatalog, "pg_constraint", 2606, false, "oid oid, conname name, connamespace oid, contype char, condeferrable bool, condeferred bool, convalidated bool, conrelid oid, contypid oid, conindid oid, conparentid oid, confrelid oid, confupdtype char, confdeltype char, confmatchtype char, conislocal bool, coninhcount int4, connoinherit bool, conkey _int2, confkey _int2, conpfeqop _oid, conppeqop _oid, conffeqop _oid, confdelsetcols _int2, conexclop _oid, conbin pg_node_tree"},
	{PGCatalog, "pg_inherits", 2611, false, "inhrelid oid, inhparent oid, inhseqno int4, inhdetachpending bool"},
	{PGCatalog, "pg_am", 2601, false, "oid oid, amname name, amhandler regproc, amtype char"},
	{PGCatalog, "pg_tablespace", 1213, false, "oid oid, spcname name, spcowner oid, spcacl _aclitem, spcoptions _text"},
	{PGCatalog, "pg_collation", 3456, false, "oid oid, collname name, collnamespace oid, collowner oid, collprovider char, collisdeterministic bool, collencoding int4, collcollate text, collctype text, colliculocale text, collversion text"},
	{PGCatalog, "pg_policy", 3256, false, "oid oid, polname name, polrelid oid, polcmd char, polpermissive bool, polroles _oid, polqual pg_node_tree, polwithcheck pg_node_tree"},
	{PGCatalog, "pg_statistic_ext", 3381, false, "oid oid, stxrelid oid, stxname name, stxnamespace oid, stxowner oid, stxstattarget int4, stxkeys int2vector, stxkind _char, stxexprs pg_node_tree"},
	{PGCatalog, "pg_publication", 6104, false, "oid oid, pubname name, pubowner oid, puballtables bool, pubinsert bool, pubupdate bool, pubdelete bool, pubtruncate bool, pubviaroot bool"},
	{PGCatalog, "pg_publication_namespace", 6237, false, "oid oid, pnpubid oid, pnnspid oid"},
	{PGCatalog, "pg_publication_rel", 6106, false, "oid oid, prpubid oid, prrelid oid, prqual pg_node_tree, prattrs int2vector"},
	{PGCatalog, "pg_sequence", 2224, false, "seqrelid oid, seqtypid oid, seqstart int8, seqincrement int8, seqmax int8, seqmin int8, seqcache int8, seqcycle bool"},
	{PGCatalog, "pg_enum", 3501, false, "oid oid, enumtypid oid, enumsortorder float4, enumlabel name"},
	{PGCatalog, "pg_trigger", 2620, false, "oid oid, tgrelid oid, tgparentid oid, tgname name, tgfoid oid, tgtype int2, tgenabled char, tgisinternal bool, tgconstrrelid oid, tgconstrindid oid, tgconstraint oid, tgdeferrable bool, tginitdeferred bool, tgnargs int2, tgattr int2vector, tgargs bytea, tgqual pg_node_tree, tgoldtable name, tgnewtable name"},
	{PGCatalog, "pg_extension", 3079, false, "oid oid, extname name, extowner oid, extnamespace oid, extrelocatable bool, extversion text, extconfig _oid, extcondition _text"},
	{PGCatalog, "pg_tables", 12001, true, "schemaname name, tablename name, tableowner name, tablespace name, hasindexes bool, hasrules bool, hastriggers bool, rowsecurity bool"},
	{PGCatalog, "pg_views", 12002, true, "schemaname name, viewname name, viewowner name, definition text"},
	{PGCatalog, "pg_matviews", 12003, true, "schemaname name, matviewname name, matviewowner name, tablespace name, hasindexes bool, ispopulated bool, definition text"},
	{PGCatalog, "pg_indexes", 12004, true, "schemaname name, tablename name, indexname name, tablespace name, indexdef text"},
	{PGCatalog, "pg_roles", 12005, true, "rolname name, rolsuper bool, rolinherit bool, rolcreaterole bool, rolcreatedb bool, rolcanlogin bool, rolreplication bool, rolconnlimit int4, rolpassword text, rolvaliduntil timestamptz, rolbypassrls bool, rolconfig _text, oid oid"},
	{PGCatalog, "pg_user", 12006, true, "usename name, usesysid oid, usecreatedb bool, usesuper bool, userepl bool, usebypassrls bool, passwd text, valuntil timestamptz, useconfig _text"},
	{PGCatalog, "pg_settings", 12007, true, "name text, setting text, unit text, category text, short_desc text, extra_desc text, context text, vartype text, source text, min_val text, max_val text, enumvals _text, boot_val text, reset_val text, sourcefile text, sourceline int4, pending_restart bool"},
	{InformationSchema, "schemata", 13001, true, "catalog_name name, schema_name name, schema_owner name, default_character_set_catalog name, default_character_set_schema name, default_character_set_name name, sql_path varchar"},
	{InformationSchema, "tables", 13002, true, "table_catalog name, table_schema name, table_name name, table_type varchar, self_referencing_column_name name, reference_generation varchar, user_defined_type_catalog name, user_defined_type_schema name, user_defined_type_name name, is_insertable_into varchar, is_typed varchar, commit_action varchar"},
	{InformationSchema, "columns", 13003, true, "table_catalog name, table_schema name, table_name name, column_name name, ordinal_position int4, column_default varchar, is_nullable varchar, data_type varchar, character_maximum_length int4, character_octet_length int4, numeric_precision int4, numeric_precision_radix int4, numeric_scale int4, datetime_precision int4, interval_type varchar, interval_precision int4, character_set_catalog name, character_set_schema name, character_set_name name, collation_catalog name, collation_schema name, collation_name name, domain_catalog name, domain_schema name, domain_name name, udt_catalog name, udt_schema name, udt_name name, scope_catalog name, scope_schema name, scope_name name, maximum_cardinality int4, dtd_identifier name, is_self_referencing varchar, is_identity varchar, identity_generation varchar, identity_start varchar, identity_increment varchar, identity_maximum varchar, identity_minimum varchar, identity_cycle varchar, is_generated varchar, generation_expression varchar, is_updatable varchar"},
	{InformationSchema, "views", 13004, true, "table_catalog name, table_schema name, table_name name, view_definition varchar, check_option varchar, is_updatable varchar, is_insertable_into varchar, is_trigger_updatable varchar, is_trigger_deletable varchar, is_trigger_insertable_into varchar"},
	{InformationSchema, "table_constraints", 13005, true, "constraint_catalog name, constraint_schema name, constraint_name name, table_catalog name, table_schema name, table_name name, constraint_type varchar, is_deferrable varchar, initially_deferred varchar, enforced varchar, nulls_distinct varchar"},
	{InformationSchema, "key_column_usage", 13006, true, "constraint_catalog name, constraint_schema name, constraint_name name, table_catalog name, table_schema name, table_name name, column_name name, ordinal_position int4, position_in_unique_constraint int4"},
}

// sessionRelations are rendered per query from the session.
var sessionRelations = map[string]bool{"pg_roles": true, "pg_user": true, "pg_settings": true}

// refusedRelations reveal statistics of private tables, other sessions'
// activity or secrets. They are refused rather than served empty, so a
// client learns why its answer is missing.
var refusedRelations = map[string]string{
	"pg_statistic":            "holds statistics (most common values, histograms) of private tables",
	"pg_stats":                "shows statistics (most common values, histograms) of private tables",
	"pg_stats_ext":            "shows statistics of private tables",
	"pg_stats_ext_exprs":      "shows statistics of private tables",
	"pg_statistic_ext_data":   "holds statistics of private tables",
	"pg_authid":               "holds password hashes",
	"pg_shadow":               "holds password hashes",
	"pg_user_mapping":         "holds credentials of foreign servers",
	"pg_user_mappings":        "holds credentials of foreign servers",
	"pg_largeobject":          "holds stored data",
	"pg_file_settings":        "reads the server's files",
	"pg_hba_file_rules":       "reads the server's files",
	"pg_ident_file_mappings":  "reads the server's files",
	"pg_replication_slots":    "shows the backend's replication state",
	"pg_largeobject_metadata": "holds stored data",
}

// refusedRelation reports why a pg_catalog relation is refused: the ones
// above and every statistics view (pg_stat_*, pg_statio_*), which count
// rows, tuples read and other sessions' queries.
func refusedRelation(name string) (string, bool) {
	if why, ok := refusedRelations[name]; ok {
		return why, true
	}
	if strings.HasPrefix(name, "pg_stat_") || strings.HasPrefix(name, "pg_statio_") {
		return "shows statistics of private tables or other sessions' activity", true
	}
	return "", false
}

var (
	relations   []*relation
	relationsBy = map[string]*relation{} // "schema.name"
	// columnTypes types a column by its name alone: catalog column names
	// carry their relation's prefix (relname, attnum), and the few shared
	// ones (oid, table_name) have one type everywhere.
	columnTypes = map[string]pgType{}
)

func init() {
	for _, d := range relationDefs {
		r := &relation{Schema: d.schema, Name: d.name, OID: d.oid, View: d.view, session: sessionRelations[d.name] && d.schema == PGCatalog}
		for _, spec := range strings.Split(d.cols, ",") {
			f := strings.Fields(spec)
			t, ok := lookupType(f[1])
			if !ok {
				panic(fmt.Sprintf("pgcatalog: %s.%s: unknown type %q", d.schema, d.name, f[1]))
			}
			r.Cols = append(r.Cols, column{Name: f[0], Type: t})
			if _, seen := columnTypes[f[0]]; !seen {
				columnTypes[f[0]] = t
			}
		}
		relations = append(relations, r)
		relationsBy[d.schema+"."+d.name] = r
	}
}

// sqliteType is the column type a value of t is stored as in SQLite:
// booleans as 0/1, arrays as JSON text.
func sqliteType(t pgType) string {
	switch {
	case t.Category == 'A' || t.OID == OIDInt2Vector || t.OID == OIDOidVector:
		return "TEXT"
	case t.OID == OIDFloat4 || t.OID == OIDFloat8:
		return "REAL"
	case t.Category == 'N' && t.OID != OIDNumeric && t.OID != OIDRegproc, t.Category == 'B',
		t.OID == 28, t.OID == 29:
		return "INTEGER"
	}
	return "TEXT"
}

// ddl is the CREATE TABLE of the relation's SQLite table.
func (r *relation) ddl() string {
	parts := make([]string, len(r.Cols))
	for i, c := range r.Cols {
		parts[i] = quoteIdent(c.Name) + " " + sqliteType(c.Type)
	}
	return "CREATE TABLE " + quoteIdent(r.sqliteName()) + " (" + strings.Join(parts, ", ") + ")"
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
