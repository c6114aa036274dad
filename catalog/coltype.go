package catalog

import (
	"strconv"
	"strings"
)

// sqlType is a column type as MariaDB's information_schema.COLUMNS describes
// it. Absent properties are nil (NULL), present ones int64.
type sqlType struct {
	DataType   string // "int", "varchar", ...
	ColumnType string // "int(11)", "varchar(50)", "bigint(20) unsigned", ...
	// Character types carry the character set and collation.
	Text                                      bool
	CharMax, OctetMax                         any
	NumPrecision, NumScale, DatetimePrecision any
}

// utf8mb4 stores at most 4 bytes per character; CHARACTER_OCTET_LENGTH of a
// character column is its length times that.
const utf8mb4MaxLen = 4

// integer types: MariaDB's default display width (signed, unsigned) and the
// decimal digits they hold (NUMERIC_PRECISION).
var integerTypes = map[string]struct{ width, uwidth, precision int64 }{
	"tinyint":   {4, 3, 3},
	"smallint":  {6, 5, 5},
	"mediumint": {9, 8, 7},
	"int":       {11, 10, 10},
	"bigint":    {20, 20, 19},
}

// lengths of the unparameterised string and binary types (bytes).
var lobTypes = map[string]int64{
	"tinytext": 255, "text": 65535, "mediumtext": 16777215, "longtext": 4294967295,
	"tinyblob": 255, "blob": 65535, "mediumblob": 16777215, "longblob": 4294967295,
}

// mysqlType maps a backend's column type to the MySQL/MariaDB type a client
// expects. It accepts both what MariaDB itself reports (COLUMN_TYPE such as
// "int(11) unsigned", "varchar(50)", "decimal(10,2)", "enum('a','b')") and
// SQLite's declared types ("INTEGER", "REAL", "TEXT", "VARCHAR(20)", "" ...).
//
// Names that MySQL never reports but SQLite uses are read with SQLite's
// meaning: "integer" is a 64-bit integer (bigint), a bare "numeric" holds any
// number (double), a "varchar" without a length is unbounded (text), and a
// column without a type (BLOB affinity) is a blob. Anything else unknown is
// classified by SQLite's type-affinity rules.
func mysqlType(backendType string) sqlType {
	base, args, mods := splitType(backendType)
	unsigned := strings.Contains(mods, "unsigned")
	suffix := ""
	if unsigned {
		suffix = " unsigned"
	}
	if strings.Contains(mods, "zerofill") {
		suffix += " zerofill"
	}
	switch base {
	case "tinyint", "smallint", "mediumint", "int", "bigint":
		return integerType(base, args, unsigned, suffix)
	case "integer":
		if args == "" {
			return integerType("bigint", "", unsigned, suffix) // SQLite's INTEGER is 64 bits
		}
		return integerType("int", args, unsigned, suffix)
	case "bool", "boolean":
		return integerType("tinyint", "1", false, "")
	case "bit":
		n := intArg(args, 0, 1)
		return sqlType{DataType: "bit", ColumnType: "bit(" + itoa(n) + ")", NumPrecision: n}
	case "decimal", "dec", "fixed", "numeric":
		if args == "" && base == "numeric" {
			return doubleType() // SQLite's NUMERIC affinity holds integers and reals alike
		}
		p, s := intArg(args, 0, 10), intArg(args, 1, 0)
		return sqlType{DataType: "decimal", ColumnType: "decimal(" + itoa(p) + "," + itoa(s) + ")" + suffix,
			NumPrecision: p, NumScale: s}
	case "float":
		t := sqlType{DataType: "float", ColumnType: "float" + suffix, NumPrecision: int64(12)}
		if args != "" {
			t.ColumnType = "float(" + args + ")" + suffix
			t.NumPrecision, t.NumScale = intArg(args, 0, 12), intArg(args, 1, 0)
		}
		return t
	case "double", "double precision", "real":
		t := doubleType()
		if args != "" {
			t.ColumnType = "double(" + args + ")"
			t.NumPrecision, t.NumScale = intArg(args, 0, 22), intArg(args, 1, 0)
		}
		t.ColumnType += suffix
		return t
	case "date":
		return sqlType{DataType: "date", ColumnType: "date"}
	case "datetime", "timestamp", "time":
		fsp := intArg(args, 0, 0)
		t := sqlType{DataType: base, ColumnType: base, DatetimePrecision: fsp}
		if args != "" {
			t.ColumnType += "(" + itoa(fsp) + ")"
		}
		return t
	case "year":
		return sqlType{DataType: "year", ColumnType: "year(4)"}
	case "char", "character", "nchar", "native character":
		return charType("char", intArg(args, 0, 1))
	case "varchar", "character varying", "varying character", "nvarchar", "nchar varying", "national varchar":
		if args == "" {
			return lobType("text")
		}
		return charType("varchar", intArg(args, 0, 255))
	case "binary", "varbinary":
		n := intArg(args, 0, 1)
		return sqlType{DataType: base, ColumnType: base + "(" + itoa(n) + ")", CharMax: n, OctetMax: n}
	case "tinytext", "text", "mediumtext", "longtext", "tinyblob", "blob", "mediumblob", "longblob":
		return lobType(base)
	case "clob":
		return lobType("longtext")
	case "json":
		return lobType("longtext") // MariaDB's JSON is an alias of LONGTEXT
	case "enum", "set":
		return sqlType{DataType: base, ColumnType: base + "(" + args + ")", Text: true}
	case "":
		return lobType("blob") // SQLite: no declared type is BLOB affinity
	}
	if isMariaDBOnly(base) {
		return sqlType{DataType: base, ColumnType: strings.TrimSpace(strings.ToLower(backendType))}
	}
	return sqliteAffinity(base)
}

// sqliteAffinity classifies a declared type SQLite's way (SQLite "Datatypes
// In SQLite", section 3.1 "Determination Of Column Affinity": the rules are
// applied in this order).
func sqliteAffinity(decl string) sqlType {
	switch {
	case strings.Contains(decl, "int"):
		return integerType("bigint", "", false, "")
	case strings.Contains(decl, "char"), strings.Contains(decl, "clob"), strings.Contains(decl, "text"):
		return lobType("text")
	case strings.Contains(decl, "blob"):
		return lobType("blob")
	}
	// REAL affinity ("real", "floa", "doub") and NUMERIC affinity (the rest)
	// both hold arbitrary numbers here.
	return doubleType()
}

// isMariaDBOnly reports types MariaDB reports that need no translation.
func isMariaDBOnly(base string) bool {
	switch base {
	case "uuid", "inet4", "inet6", "geometry", "point", "linestring", "polygon",
		"multipoint", "multilinestring", "multipolygon", "geometrycollection":
		return true
	}
	return false
}

func integerType(base, args string, unsigned bool, suffix string) sqlType {
	it := integerTypes[base]
	width := it.width
	precision := it.precision
	if unsigned {
		width = it.uwidth
		if base == "bigint" {
			precision = 20
		}
	}
	width = intArg(args, 0, width)
	return sqlType{DataType: base, ColumnType: base + "(" + itoa(width) + ")" + suffix,
		NumPrecision: precision, NumScale: int64(0)}
}

func doubleType() sqlType {
	return sqlType{DataType: "double", ColumnType: "double", NumPrecision: int64(22)}
}

func charType(base string, n int64) sqlType {
	return sqlType{DataType: base, ColumnType: base + "(" + itoa(n) + ")", Text: true,
		CharMax: n, OctetMax: n * utf8mb4MaxLen}
}

func lobType(base string) sqlType {
	n := lobTypes[base]
	return sqlType{DataType: base, ColumnType: base, Text: strings.HasSuffix(base, "text"),
		CharMax: n, OctetMax: n}
}

// splitType splits "decimal(10,2) unsigned zerofill" into its lower-case base
// name, the text between the parentheses and the modifiers after them.
func splitType(t string) (base, args, mods string) {
	t = strings.ToLower(strings.TrimSpace(t))
	if open := strings.IndexByte(t, '('); open >= 0 {
		if end := strings.LastIndexByte(t, ')'); end > open {
			return strings.Join(strings.Fields(t[:open]), " "), strings.TrimSpace(t[open+1 : end]), t[end+1:]
		}
	}
	fields := strings.Fields(t)
	var kept []string
	for _, f := range fields {
		switch f {
		case "unsigned", "signed", "zerofill":
			mods += " " + f
		default:
			kept = append(kept, f)
		}
	}
	return strings.Join(kept, " "), "", mods
}

// intArg returns the i-th comma-separated integer of args, or def.
func intArg(args string, i int, def int64) int64 {
	parts := strings.Split(args, ",")
	if i >= len(parts) {
		return def
	}
	n, err := strconv.ParseInt(strings.TrimSpace(parts[i]), 10, 64)
	if err != nil {
		return def
	}
	return n
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
