package pgcatalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// row is one row to insert: column name → value (absent columns take the
// zero of their type: false, 0, or NULL for text and arrays).
type row map[string]any

// ownerName is the role that owns every emulated object (OID 10).
const ownerName = "dpproxy"

func (c *Catalog) fill(ctx context.Context) error {
	rows := map[string][]row{}
	add := func(rel string, r row) { rows[rel] = append(rows[rel], r) }

	nsOf := map[string]uint32{PGCatalog: nsPGCatalog, c.schema: nsPublic, InformationSchema: nsInfoSchema}
	for _, ns := range []string{PGCatalog, c.schema, InformationSchema} {
		add("pg_namespace", row{"oid": nsOf[ns], "nspname": ns, "nspowner": ownerOID})
		add("information_schema.schemata", row{"catalog_name": c.db, "schema_name": ns, "schema_owner": ownerName})
	}
	for _, r := range relations {
		kind := "r"
		if r.View {
			kind = "v"
		}
		add("pg_class", c.classRow(r.OID, r.Name, nsOf[r.Schema], kind, len(r.Cols)))
		for i, col := range r.Cols {
			add("pg_attribute", attributeRow(r.OID, i+1, col.Name, col.Type, -1, true, false))
		}
		ttype := "BASE TABLE"
		if r.View {
			ttype = "VIEW"
		}
		add("information_schema.tables", tablesRow(c.db, r.Schema, r.Name, ttype))
	}
	adOID := int64(firstUserOID + 8)
	for _, t := range c.tables {
		oid := c.tableOID[t.Name]
		add("pg_class", c.classRow(oid, t.Name, nsPublic, "r", len(t.Columns)))
		add("pg_tables", row{"schemaname": c.schema, "tablename": t.Name, "tableowner": ownerName})
		add("information_schema.tables", tablesRow(c.db, c.schema, t.Name, "BASE TABLE"))
		for i, col := range t.Columns {
			ct := backendType(col.Type)
			typ := typesByOID[ct.OID]
			add("pg_attribute", attributeRow(oid, i+1, strings.ToLower(col.Name), typ, ct.Typmod, !col.Nullable, col.Default != nil))
			if col.Default != nil {
				add("pg_attrdef", row{"oid": adOID, "adrelid": oid, "adnum": i + 1, "adbin": *col.Default})
				adOID++
			}
			add("information_schema.columns", c.columnsRow(t.Name, i+1, strings.ToLower(col.Name), ct, col.Nullable, col.Default))
		}
	}
	for _, t := range typesByOID {
		add("pg_type", typeRow(t))
	}
	add("pg_database", row{"oid": int64(16384), "datname": c.db, "datdba": ownerOID, "encoding": 6,
		"datlocprovider": "c", "datallowconn": true, "datconnlimit": -1, "dattablespace": defaultTblspc,
		"datcollate": "C.UTF-8", "datctype": "C.UTF-8"})
	for _, am := range []struct {
		oid          int64
		name, h, typ string
	}{{2, "heap", "heap_tableam_handler", "t"}, {403, "btree", "bthandler", "i"}, {405, "hash", "hashhandler", "i"},
		{783, "gist", "gisthandler", "i"}, {2742, "gin", "ginhandler", "i"}, {4000, "spgist", "spghandler", "i"}, {3580, "brin", "brinhandler", "i"}} {
		add("pg_am", row{"oid": am.oid, "amname": am.name, "amhandler": am.h, "amtype": am.typ})
	}
	add("pg_tablespace", row{"oid": defaultTblspc, "spcname": "pg_default", "spcowner": ownerOID})
	add("pg_tablespace", row{"oid": int64(1664), "spcname": "pg_global", "spcowner": ownerOID})
	for _, co := range []struct {
		oid        int64
		name, prov string
	}{{100, "default", "d"}, {950, "C", "c"}, {951, "POSIX", "c"}} {
		add("pg_collation", row{"oid": co.oid, "collname": co.name, "collnamespace": nsPGCatalog, "collowner": ownerOID,
			"collprovider": co.prov, "collisdeterministic": true, "collencoding": -1})
	}

	tx, err := c.keep.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, r := range relations {
		if r.session {
			continue
		}
		if _, err := tx.ExecContext(ctx, r.ddl()); err != nil {
			return fmt.Errorf("create %s.%s: %w", r.Schema, r.Name, err)
		}
		if err := insertRows(ctx, tx, r, rows[r.key()]); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// key is how fill names the relation: pg_catalog relations by their name.
func (r *relation) key() string {
	if r.Schema == PGCatalog {
		return r.Name
	}
	return r.Schema + "." + r.Name
}

// insertRows inserts rows with bound values: names and default
// expressions come from the backend and are never spliced into SQL.
func insertRows(ctx context.Context, tx *sql.Tx, r *relation, rows []row) error {
	if len(rows) == 0 {
		return nil
	}
	names := make([]string, len(r.Cols))
	marks := make([]string, len(r.Cols))
	for i, col := range r.Cols {
		names[i] = quoteIdent(col.Name)
		marks[i] = "?"
	}
	stmt, err := tx.PrepareContext(ctx, "INSERT INTO "+quoteIdent(r.sqliteName())+" ("+strings.Join(names, ", ")+") VALUES ("+strings.Join(marks, ", ")+")")
	if err != nil {
		return fmt.Errorf("insert into %s.%s: %w", r.Schema, r.Name, err)
	}
	defer stmt.Close()
	args := make([]any, len(r.Cols))
	for _, rw := range rows {
		for i, col := range r.Cols {
			v, ok := rw[col.Name]
			if !ok {
				v = zeroValue(col.Type)
			}
			args[i] = storeValue(v)
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("insert into %s.%s: %w", r.Schema, r.Name, err)
		}
	}
	for name := range rows[0] {
		if !slices.ContainsFunc(r.Cols, func(c column) bool { return c.Name == name }) {
			return fmt.Errorf("%s.%s has no column %s", r.Schema, r.Name, name)
		}
	}
	return nil
}

// zeroValue is what an unset column holds: false, 0, or NULL.
func zeroValue(t pgType) any {
	switch sqliteType(t) {
	case "INTEGER", "REAL":
		return int64(0)
	}
	return nil
}

// storeValue converts a Go value to what the SQLite column holds: arrays
// as JSON text.
func storeValue(v any) any {
	switch x := v.(type) {
	case []string, []int64:
		b, _ := json.Marshal(x)
		return string(b)
	case uint32:
		return int64(x)
	case int:
		return int64(x)
	}
	return v
}

// classRow is the pg_class row of a table or an emulated relation. Its
// size estimates are those of a table never analysed (reltuples -1,
// relpages 0) whatever the backend holds: they would reveal row counts.
func (c *Catalog) classRow(oid uint32, name string, ns uint32, kind string, natts int) row {
	am := uint32(2) // heap
	if kind == "v" {
		am = 0
	}
	return row{"oid": oid, "relname": name, "relnamespace": ns, "relowner": ownerOID, "relam": am,
		"relfilenode": oid, "relpages": 0, "reltuples": -1.0, "relpersistence": "p", "relkind": kind,
		"relnatts": natts, "relispopulated": true, "relreplident": "d",
		"relisshared": name == "pg_database" || name == "pg_tablespace"}
}

func attributeRow(rel uint32, num int, name string, t pgType, typmod int64, notNull, hasDef bool) row {
	align, storage := typeStorage(t)
	coll := uint32(0)
	if t.Category == 'S' && t.OID != OIDName {
		coll = 100
	} else if t.OID == OIDName {
		coll = 950
	}
	ndims := 0
	if t.Category == 'A' {
		ndims = 1
	}
	return row{"attrelid": rel, "attname": name, "atttypid": t.OID, "attstattarget": -1, "attlen": t.Len,
		"attnum": num, "attndims": ndims, "attcacheoff": -1, "atttypmod": typmod, "attbyval": t.ByVal,
		"attalign": align, "attstorage": storage, "attcompression": "", "attnotnull": notNull,
		"atthasdef": hasDef, "attidentity": "", "attgenerated": "", "attislocal": true, "attcollation": coll}
}

func typeRow(t pgType) row {
	align, storage := typeStorage(t)
	typtype := "b"
	if t.Category == 'P' {
		typtype = "p"
	}
	in, out, recv, send, sub := t.Name+"in", t.Name+"out", t.Name+"recv", t.Name+"send", "-"
	if t.Category == 'A' && t.Name[0] == '_' {
		in, out, recv, send, sub = "array_in", "array_out", "array_recv", "array_send", "array_subscript_handler"
	}
	coll := uint32(0)
	if t.Category == 'S' {
		coll = 100
		if t.OID == OIDName {
			coll = 950
		}
	}
	return row{"oid": t.OID, "typname": t.Name, "typnamespace": nsPGCatalog, "typowner": ownerOID,
		"typlen": t.Len, "typbyval": t.ByVal, "typtype": typtype, "typcategory": string(t.Category),
		"typispreferred": t.OID == OIDText || t.OID == OIDFloat8 || t.OID == OIDOid || t.OID == OIDBool || t.OID == OIDTimestamptz,
		"typisdefined":   true, "typdelim": ",", "typsubscript": sub, "typelem": t.Elem, "typarray": t.Array,
		"typinput": in, "typoutput": out, "typreceive": recv, "typsend": send, "typmodin": "-", "typmodout": "-",
		"typanalyze": "-", "typalign": align, "typstorage": storage, "typtypmod": -1, "typcollation": coll}
}

func tablesRow(db, schema, name, ttype string) row {
	return row{"table_catalog": db, "table_schema": schema, "table_name": name, "table_type": ttype,
		"is_insertable_into": "NO", "is_typed": "NO"}
}

// columnsRow is a column as PostgreSQL's information_schema.columns
// describes it (information_schema.sql: the _pg_char_max_length,
// _pg_numeric_precision, ... helpers).
func (c *Catalog) columnsRow(table string, num int, name string, ct columnType, nullable bool, def *string) row {
	t := typesByOID[ct.OID]
	dataType := formatType(ct.OID, -1)
	if ct.OID == OIDBpchar {
		dataType = "character"
	}
	r := row{"table_catalog": c.db, "table_schema": c.schema, "table_name": table, "column_name": name,
		"ordinal_position": num, "is_nullable": yesNo(nullable), "data_type": dataType,
		"udt_catalog": c.db, "udt_schema": PGCatalog, "udt_name": t.Name, "dtd_identifier": strconv.Itoa(num),
		"is_self_referencing": "NO", "is_identity": "NO", "identity_cycle": "NO", "is_generated": "NEVER",
		"is_updatable": "NO"}
	if def != nil {
		r["column_default"] = *def
	}
	switch ct.OID {
	case OIDInt8, OIDInt4, OIDInt2:
		r["numeric_precision"] = map[uint32]int{OIDInt8: 64, OIDInt4: 32, OIDInt2: 16}[ct.OID]
		r["numeric_precision_radix"], r["numeric_scale"] = 2, 0
	case OIDFloat8:
		r["numeric_precision"], r["numeric_precision_radix"] = 53, 2
	case OIDNumeric:
		r["numeric_precision_radix"] = 10
		if ct.Typmod >= 4 {
			r["numeric_precision"], r["numeric_scale"] = ((ct.Typmod-4)>>16)&0xffff, (ct.Typmod-4)&0xffff
		}
	case OIDVarchar, OIDBpchar, OIDText:
		// 1 GB is the octet length of an unbounded character column;
		// a bounded one holds at most 4 bytes a character in UTF8.
		if ct.Typmod >= 4 {
			r["character_maximum_length"], r["character_octet_length"] = ct.Typmod-4, (ct.Typmod-4)*4
		} else {
			r["character_octet_length"] = 1073741824
		}
		r["collation_catalog"], r["collation_schema"], r["collation_name"] = nil, nil, nil
	case OIDDate:
		r["datetime_precision"] = 0
	case OIDTimestamp, OIDTimestamptz, OIDTime:
		r["datetime_precision"] = 6
	}
	return r
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}
