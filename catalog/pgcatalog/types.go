package pgcatalog

import (
	"fmt"
	"strconv"
	"strings"
)

// pgType is one row of the emulated pg_type: a built-in type with the OID
// PostgreSQL gives it (src/include/catalog/pg_type.dat), which drivers
// hard-code.
type pgType struct {
	OID      uint32
	Name     string
	Len      int  // typlen: bytes, -1 varlena, -2 C string
	ByVal    bool // typbyval
	Category byte // typcategory
	Elem     uint32
	Array    uint32
}

// PostgreSQL type OIDs the emulation uses by name.
const (
	OIDBool        uint32 = 16
	OIDBytea       uint32 = 17
	OIDChar        uint32 = 18
	OIDName        uint32 = 19
	OIDInt8        uint32 = 20
	OIDInt2        uint32 = 21
	OIDInt2Vector  uint32 = 22
	OIDInt4        uint32 = 23
	OIDRegproc     uint32 = 24
	OIDText        uint32 = 25
	OIDOid         uint32 = 26
	OIDOidVector   uint32 = 30
	OIDJSON        uint32 = 114
	OIDNodeTree    uint32 = 194
	OIDFloat4      uint32 = 700
	OIDFloat8      uint32 = 701
	OIDBpchar      uint32 = 1042
	OIDVarchar     uint32 = 1043
	OIDDate        uint32 = 1082
	OIDTime        uint32 = 1083
	OIDTimestamp   uint32 = 1114
	OIDTimestamptz uint32 = 1184
	OIDNumeric     uint32 = 1700
	OIDRegclass    uint32 = 2205
	OIDRegtype     uint32 = 2206
	OIDUUID        uint32 = 2950
	OIDRegnsp      uint32 = 4089
	OIDTextArray   uint32 = 1009
	OIDOidArray    uint32 = 1028
	OIDInt2Array   uint32 = 1005
	OIDNameArray   uint32 = 1003
	OIDCharArray   uint32 = 1002
	OIDACLArray    uint32 = 1034
)

// builtinTypes are the base types the emulated pg_type lists, with their
// array types generated from Array.
var builtinTypes = []pgType{
	{16, "bool", 1, true, 'B', 0, 1000},
	{17, "bytea", -1, false, 'U', 0, 1001},
	{18, "char", 1, true, 'Z', 0, 1002},
	{19, "name", 64, false, 'S', 0, 1003},
	{20, "int8", 8, true, 'N', 0, 1016},
	{21, "int2", 2, true, 'N', 0, 1005},
	{22, "int2vector", -1, false, 'A', 21, 1006},
	{23, "int4", 4, true, 'N', 0, 1007},
	{24, "regproc", 4, true, 'N', 0, 1008},
	{25, "text", -1, false, 'S', 0, 1009},
	{26, "oid", 4, true, 'N', 0, 1028},
	{27, "tid", 6, false, 'U', 0, 1010},
	{28, "xid", 4, true, 'U', 0, 1011},
	{29, "cid", 4, true, 'U', 0, 1012},
	{30, "oidvector", -1, false, 'A', 26, 1013},
	{114, "json", -1, false, 'U', 0, 199},
	{142, "xml", -1, false, 'U', 0, 143},
	{194, "pg_node_tree", -1, false, 'Z', 0, 0},
	{650, "cidr", -1, false, 'I', 0, 651},
	{700, "float4", 4, true, 'N', 0, 1021},
	{701, "float8", 8, true, 'N', 0, 1022},
	{705, "unknown", -2, false, 'X', 0, 0},
	{790, "money", 8, true, 'N', 0, 791},
	{829, "macaddr", 6, false, 'U', 0, 1040},
	{869, "inet", -1, false, 'I', 0, 1041},
	{1033, "aclitem", 12, false, 'U', 0, 1034},
	{1042, "bpchar", -1, false, 'S', 0, 1014},
	{1043, "varchar", -1, false, 'S', 0, 1015},
	{1082, "date", 4, true, 'D', 0, 1182},
	{1083, "time", 8, true, 'D', 0, 1183},
	{1114, "timestamp", 8, true, 'D', 0, 1115},
	{1184, "timestamptz", 8, true, 'D', 0, 1185},
	{1186, "interval", 16, false, 'T', 0, 1187},
	{1266, "timetz", 12, false, 'D', 0, 1270},
	{1560, "bit", -1, false, 'V', 0, 1561},
	{1562, "varbit", -1, false, 'V', 0, 1563},
	{1700, "numeric", -1, false, 'N', 0, 1231},
	{2205, "regclass", 4, true, 'N', 0, 2210},
	{2206, "regtype", 4, true, 'N', 0, 2211},
	{2249, "record", -1, false, 'P', 0, 2287},
	{2275, "cstring", -2, false, 'P', 0, 1263},
	{2277, "anyarray", -1, false, 'P', 0, 0},
	{2278, "void", 4, true, 'P', 0, 0},
	{2950, "uuid", 16, false, 'U', 0, 2951},
	{3802, "jsonb", -1, false, 'U', 0, 3807},
	{4089, "regnamespace", 4, true, 'N', 0, 4090},
	{4096, "regrole", 4, true, 'N', 0, 4097},
}

// typesByOID and typesByName are initialised as variables, before any
// init function (schema.go's reads them).
var typesByOID, typesByName = buildTypes()

func buildTypes() (map[uint32]pgType, map[string]pgType) {
	typesByOID, typesByName := map[uint32]pgType{}, map[string]pgType{}
	for _, t := range builtinTypes {
		typesByOID[t.OID] = t
		typesByName[t.Name] = t
		if t.Array != 0 {
			a := pgType{OID: t.Array, Name: "_" + t.Name, Len: -1, Category: 'A', Elem: t.OID}
			typesByOID[a.OID] = a
			typesByName[a.Name] = a
		}
	}
	return typesByOID, typesByName
}

// typeAliases are the SQL spellings of types whose pg_type name differs
// (format_type's output and the grammar's keywords).
var typeAliases = map[string]string{
	"boolean": "bool", "bigint": "int8", "integer": "int4", "int": "int4", "smallint": "int2",
	"real": "float4", "double precision": "float8", "float": "float8",
	"character varying": "varchar", "character": "bpchar", "decimal": "numeric",
	"timestamp without time zone": "timestamp", "timestamp with time zone": "timestamptz",
	"time without time zone": "time", "time with time zone": "timetz", "bit varying": "varbit",
	`"char"`: "char",
	// The model's normalised cast names (parser.Cast).
	"string": "text", "datetime": "timestamp", "binary": "bytea",
}

// lookupType finds a type by any of its names ("bigint", "int8",
// "pg_catalog.int8", "text[]", "_text").
func lookupType(name string) (pgType, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	name = strings.TrimPrefix(name, "pg_catalog.")
	if base, ok := strings.CutSuffix(name, "[]"); ok {
		t, ok := lookupType(base)
		if !ok || t.Array == 0 {
			return pgType{}, false
		}
		return typesByOID[t.Array], true
	}
	if i := strings.IndexByte(name, '('); i > 0 {
		name = strings.TrimSpace(name[:i])
	}
	if a, ok := typeAliases[name]; ok {
		name = a
	}
	t, ok := typesByName[name]
	return t, ok
}

// formatType is PostgreSQL's format_type(oid, typmod): the SQL name of a
// type with its modifier (format_type.c).
func formatType(oid uint32, typmod int64) string {
	t, ok := typesByOID[oid]
	if !ok {
		return "???"
	}
	if t.Category == 'A' && t.Elem != 0 && t.Name[0] == '_' {
		return formatType(t.Elem, typmod) + "[]"
	}
	// A typmod of -1 means none. For the character types it is the length
	// plus VARHDRSZ (4); for numeric ((precision << 16) | scale) + 4
	// (utils/adt/varchar.c, numeric.c).
	mod := func(base string) string {
		if typmod < 0 {
			return base
		}
		return base + "(" + strconv.FormatInt(typmod, 10) + ")"
	}
	switch oid {
	case OIDBool:
		return "boolean"
	case OIDInt8:
		return "bigint"
	case OIDInt4:
		return "integer"
	case OIDInt2:
		return "smallint"
	case OIDFloat4:
		return "real"
	case OIDFloat8:
		return "double precision"
	case OIDChar:
		return `"char"`
	case OIDVarchar:
		if typmod >= 4 {
			return "character varying(" + strconv.FormatInt(typmod-4, 10) + ")"
		}
		return "character varying"
	case OIDBpchar:
		if typmod >= 4 {
			return "character(" + strconv.FormatInt(typmod-4, 10) + ")"
		}
		return "bpchar"
	case OIDNumeric:
		if typmod >= 4 {
			p, s := ((typmod-4)>>16)&0xffff, (typmod-4)&0xffff
			return fmt.Sprintf("numeric(%d,%d)", p, s)
		}
		return "numeric"
	case OIDTimestamp:
		return mod("timestamp") + " without time zone"
	case OIDTimestamptz:
		return mod("timestamp") + " with time zone"
	case OIDTime:
		return mod("time") + " without time zone"
	case 1266:
		return mod("time") + " with time zone"
	case 1560:
		return mod("bit")
	case 1562:
		return mod("bit varying")
	}
	return t.Name
}

// columnType is a backend column's type as PostgreSQL would declare it.
type columnType struct {
	OID    uint32
	Typmod int64 // -1: none
}

// backendType maps a backend's declared column type — MySQL's COLUMN_TYPE
// ("bigint(20)", "varchar(64)", "decimal(10,2)"), SQLite's declared type
// ("INTEGER", "REAL", "TEXT") or PostgreSQL's information_schema data_type
// ("bigint", "character varying", "timestamp without time zone") — to the
// PostgreSQL type a client should see. A bare "integer" is read with
// SQLite's meaning (64 bits) as the MySQL catalog does, so that no value
// can overflow the type a client was told.
func backendType(decl string) columnType {
	base, args := splitDecl(decl)
	n1, n2 := declArgs(args)
	none := columnType{Typmod: -1}
	switch base {
	case "bigint", "int8", "integer", "bigserial", "serial8":
		return columnType{OIDInt8, -1}
	case "int", "int4", "mediumint", "serial", "serial4":
		return columnType{OIDInt4, -1}
	case "smallint", "int2", "tinyint", "smallserial":
		return columnType{OIDInt2, -1}
	case "bool", "boolean":
		return columnType{OIDBool, -1}
	case "double", "double precision", "float8", "real", "float", "float4":
		return columnType{OIDFloat8, -1}
	case "decimal", "numeric", "dec", "fixed":
		if n1 > 0 {
			return columnType{OIDNumeric, (n1<<16 | max(n2, 0)) + 4}
		}
		return columnType{OIDNumeric, -1}
	case "varchar", "character varying", "nvarchar", "varying character":
		if n1 > 0 {
			return columnType{OIDVarchar, n1 + 4}
		}
		return columnType{OIDVarchar, -1}
	case "char", "character", "nchar", "bpchar":
		if n1 <= 0 {
			n1 = 1
		}
		return columnType{OIDBpchar, n1 + 4}
	case "text", "tinytext", "mediumtext", "longtext", "clob", "enum", "set", "json", "jsonb":
		return columnType{OIDText, -1}
	case "date":
		return columnType{OIDDate, -1}
	case "datetime", "timestamp", "timestamp without time zone":
		return columnType{OIDTimestamp, -1}
	case "timestamptz", "timestamp with time zone":
		return columnType{OIDTimestamptz, -1}
	case "time", "time without time zone":
		return columnType{OIDTime, -1}
	case "blob", "tinyblob", "mediumblob", "longblob", "bytea", "binary", "varbinary", "":
		return columnType{OIDBytea, -1}
	case "uuid":
		return columnType{OIDUUID, -1}
	}
	// SQLite's affinity rules, in their order ("Datatypes In SQLite",
	// section 3.1).
	switch {
	case strings.Contains(base, "int"):
		return columnType{OIDInt8, -1}
	case strings.Contains(base, "char"), strings.Contains(base, "clob"), strings.Contains(base, "text"):
		return columnType{OIDText, -1}
	case strings.Contains(base, "blob"):
		return columnType{OIDBytea, -1}
	case strings.Contains(base, "real"), strings.Contains(base, "floa"), strings.Contains(base, "doub"):
		return columnType{OIDFloat8, -1}
	}
	none.OID = OIDNumeric
	return none
}

// splitDecl splits "decimal(10,2) unsigned" into "decimal" and "10,2".
func splitDecl(decl string) (base, args string) {
	d := strings.ToLower(strings.TrimSpace(decl))
	if open := strings.IndexByte(d, '('); open >= 0 {
		if end := strings.LastIndexByte(d, ')'); end > open {
			args = d[open+1 : end]
		}
		d = d[:open]
	}
	var kept []string
	for _, f := range strings.Fields(d) {
		if f != "unsigned" && f != "signed" && f != "zerofill" {
			kept = append(kept, f)
		}
	}
	return strings.Join(kept, " "), args
}

func declArgs(args string) (int64, int64) {
	parts := strings.Split(args, ",")
	n := func(i int) int64 {
		if i >= len(parts) {
			return -1
		}
		v, err := strconv.ParseInt(strings.TrimSpace(parts[i]), 10, 64)
		if err != nil {
			return -1
		}
		return v
	}
	return n(0), n(1)
}

// typeStorage is a type's typalign and typstorage (pg_type.h): fixed-size
// types are stored plain with their natural alignment, variable-length ones
// extended (compressible, out of line) with int alignment.
func typeStorage(t pgType) (align, storage string) {
	switch {
	case t.Len == 8:
		return "d", "p"
	case t.Len == 4:
		return "i", "p"
	case t.Len == 2:
		return "s", "p"
	case t.Len > 0:
		return "c", "p"
	}
	return "i", "x"
}
