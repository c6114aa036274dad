package pgcatalog

import (
	"context"
	"encoding/json"
	"fmt"
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

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (interface{ RowsAffected() (int64, error) }, error)
}

func insertRows(ctx context.Context, tx interface {
	PrepareContext(context.Context, string) (*sqlStmt, error)
}, r *relation, rows []row) error {
	return nil
}
