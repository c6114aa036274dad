package catalog

import "testing"

func TestMySQLTypeMapsSQLiteAndMariaDBNames(t *testing.T) {
	for _, tc := range []struct {
		in, dataType, columnType string
		text                     bool
	}{
		// SQLite declared types.
		{"INTEGER", "bigint", "bigint(20)", false},
		{"REAL", "double", "double", false},
		{"TEXT", "text", "text", true},
		{"BLOB", "blob", "blob", false},
		{"", "blob", "blob", false},
		{"NUMERIC", "double", "double", false},
		{"VARCHAR(20)", "varchar", "varchar(20)", true},
		{"VARCHAR", "text", "text", true},
		{"NVARCHAR(10)", "varchar", "varchar(10)", true},
		{"CHARACTER(4)", "char", "char(4)", true},
		{"BOOLEAN", "tinyint", "tinyint(1)", false},
		{"DATE", "date", "date", false},
		{"DATETIME", "datetime", "datetime", false},
		{"DOUBLE PRECISION", "double", "double", false},
		{"FLOAT", "float", "float", false},
		{"UNSIGNED BIG INT", "bigint", "bigint(20)", false}, // SQLite affinity rule 1
		{"CLOB", "longtext", "longtext", true},
		{"MONEY", "double", "double", false}, // NUMERIC affinity
		// MariaDB's COLUMN_TYPE and MySQL 8's width-less names.
		{"int(11)", "int", "int(11)", false},
		{"int", "int", "int(11)", false},
		{"int unsigned", "int", "int(10) unsigned", false},
		{"int(10) unsigned", "int", "int(10) unsigned", false},
		{"tinyint(1)", "tinyint", "tinyint(1)", false},
		{"smallint", "smallint", "smallint(6)", false},
		{"bigint(20) unsigned zerofill", "bigint", "bigint(20) unsigned zerofill", false},
		{"decimal(10,2)", "decimal", "decimal(10,2)", false},
		{"decimal", "decimal", "decimal(10,0)", false},
		{"double", "double", "double", false},
		{"varchar(255)", "varchar", "varchar(255)", true},
		{"char(3)", "char", "char(3)", true},
		{"mediumtext", "mediumtext", "mediumtext", true},
		{"longblob", "longblob", "longblob", false},
		{"varbinary(16)", "varbinary", "varbinary(16)", false},
		{"datetime(6)", "datetime", "datetime(6)", false},
		{"timestamp", "timestamp", "timestamp", false},
		{"year(4)", "year", "year(4)", false},
		{"json", "longtext", "longtext", true},
		{"enum('a','b(c)')", "enum", "enum('a','b(c)')", true},
		{"bit(8)", "bit", "bit(8)", false},
		{"point", "point", "point", false},
	} {
		got := mysqlType(tc.in)
		if got.DataType != tc.dataType || got.ColumnType != tc.columnType || got.Text != tc.text {
			t.Errorf("mysqlType(%q) = %s / %s text=%v, want %s / %s text=%v",
				tc.in, got.DataType, got.ColumnType, got.Text, tc.dataType, tc.columnType, tc.text)
		}
	}
}

func TestMySQLTypeLengthsAndPrecision(t *testing.T) {
	v := mysqlType("varchar(50)")
	if v.CharMax != int64(50) || v.OctetMax != int64(200) || v.NumPrecision != nil {
		t.Errorf("varchar(50): max %v octets %v precision %v", v.CharMax, v.OctetMax, v.NumPrecision)
	}
	d := mysqlType("decimal(12,3)")
	if d.NumPrecision != int64(12) || d.NumScale != int64(3) || d.CharMax != nil {
		t.Errorf("decimal(12,3): precision %v scale %v", d.NumPrecision, d.NumScale)
	}
	i := mysqlType("INTEGER")
	if i.NumPrecision != int64(19) || i.NumScale != int64(0) {
		t.Errorf("INTEGER: precision %v scale %v", i.NumPrecision, i.NumScale)
	}
	u := mysqlType("bigint unsigned")
	if u.NumPrecision != int64(20) {
		t.Errorf("bigint unsigned: precision %v, want 20", u.NumPrecision)
	}
	dt := mysqlType("datetime(3)")
	if dt.DatetimePrecision != int64(3) {
		t.Errorf("datetime(3): precision %v", dt.DatetimePrecision)
	}
}
