package mysqlwire

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"vitess.io/vitess/go/mysql/collations"
	"vitess.io/vitess/go/sqltypes"
	querypb "vitess.io/vitess/go/vt/proto/query"

	"github.com/dpproxy/dpproxy/proxy"
)

// Column display lengths, as MySQL reports them for the same types: BIGINT
// is 20 characters, DOUBLE 22, DATE 10, DATETIME 19 (26 with microseconds).
// A VARCHAR is announced as at least 255 utf8mb4 characters (4 bytes each)
// or the longest value sent, whichever is larger.
const (
	lenInt64          = 20
	lenFloat64        = 22
	lenDate           = 10
	lenDateTime       = 19
	lenDateTimeMicros = 26
	lenVarChar        = 255 * 4
	// decimalsNotFixed is MySQL's NOT_FIXED_DEC: a DOUBLE computed by an
	// expression has no fixed number of decimals.
	decimalsNotFixed = 31
	// charsetBinary is the collation id of non-string columns.
	charsetBinary = uint32(collations.CollationBinaryID)
	// charsetUTF8mb4 is utf8mb4_0900_ai_ci, the default collation of MySQL 8.
	charsetUTF8mb4 = uint32(255)
)

const (
	flagsNumeric = uint32(querypb.MySqlFlag_BINARY_FLAG | querypb.MySqlFlag_NUM_FLAG)
	flagsBinary  = uint32(querypb.MySqlFlag_BINARY_FLAG)
)

// toResult converts an engine result to what vitess writes to the client.
// A result without Columns is an OK packet carrying AffectedRows. Every
// value is converted to its column's type, because the binary protocol of
// prepared statements encodes a cell by its own type and the client decodes
// it by the column's.
func toResult(r *proxy.Result) (*sqltypes.Result, error) {
	if r == nil {
		return nil, fmt.Errorf("mysqlwire: the engine returned no result")
	}
	if r.Columns == nil {
		return &sqltypes.Result{RowsAffected: r.AffectedRows, Info: r.Info}, nil
	}
	fields := toFields(r.Columns)
	rows := make([][]sqltypes.Value, len(r.Rows))
	for i, row := range r.Rows {
		if len(row) != len(r.Columns) {
			return nil, fmt.Errorf("mysqlwire: row %d has %d values for %d columns", i, len(row), len(r.Columns))
		}
		out := make([]sqltypes.Value, len(row))
		for j, v := range row {
			val, err := toValue(r.Columns[j].Type, v)
			if err != nil {
				return nil, fmt.Errorf("mysqlwire: row %d, column %q: %w", i, r.Columns[j].Name, err)
			}
			out[j] = val
			widen(fields[j], val)
		}
		rows[i] = out
	}
	return &sqltypes.Result{Fields: fields, Rows: rows, Info: r.Info}, nil
}

// toFields describes the columns with MySQL's own metadata for each type.
func toFields(cols []proxy.Column) []*querypb.Field {
	fields := make([]*querypb.Field, len(cols))
	for i, c := range cols {
		f := &querypb.Field{
			Name:     c.Name,
			Table:    c.Table,
			OrgTable: c.Table,
			Database: c.Schema,
			Charset:  charsetBinary,
		}
		if c.Table != "" {
			f.OrgName = c.Name
		}
		switch c.Type {
		case proxy.TypeInt:
			f.Type, f.ColumnLength, f.Flags = sqltypes.Int64, lenInt64, flagsNumeric
		case proxy.TypeFloat:
			f.Type, f.ColumnLength, f.Flags = sqltypes.Float64, lenFloat64, flagsNumeric
			f.Decimals = decimalsNotFixed
		case proxy.TypeDate:
			f.Type, f.ColumnLength, f.Flags = sqltypes.Date, lenDate, flagsBinary
		case proxy.TypeDateTime:
			f.Type, f.ColumnLength, f.Flags = sqltypes.Datetime, lenDateTime, flagsBinary
		case proxy.TypeNull:
			f.Type, f.Flags = sqltypes.Null, flagsBinary
		default: // TypeString, and any type this package does not know yet
			f.Type, f.ColumnLength, f.Charset = sqltypes.VarChar, lenVarChar, charsetUTF8mb4
		}
		fields[i] = f
	}
	return fields
}

// widen grows a field's announced length to fit a value, and announces
// microseconds for a DATETIME column once one value carries them.
func widen(f *querypb.Field, v sqltypes.Value) {
	switch f.Type {
	case sqltypes.VarChar:
		f.ColumnLength = max(f.ColumnLength, uint32(min(len(v.Raw()), math.MaxUint32)))
	case sqltypes.Datetime:
		if len(v.Raw()) > lenDateTime {
			f.ColumnLength, f.Decimals = lenDateTimeMicros, 6
		}
	}
}

// toValue converts one cell to the column's type. nil is NULL in any column.
func toValue(t proxy.ColumnType, v proxy.Value) (sqltypes.Value, error) {
	if v == nil {
		return sqltypes.NULL, nil
	}
	switch t {
	case proxy.TypeInt:
		i, err := proxy.AsInt64(v)
		if err != nil {
			return sqltypes.Value{}, err
		}
		return sqltypes.NewInt64(i), nil
	case proxy.TypeFloat:
		f, err := proxy.AsFloat64(v)
		if err != nil {
			return sqltypes.Value{}, err
		}
		// NewFloat64 prints like MySQL: the shortest digits that round-trip,
		// in positional notation between 1e-15 and 1e15 and with an exponent
		// outside; strconv's 'g' would print a noisy count of 1234567 as
		// 1.234567e+06.
		return sqltypes.NewFloat64(f), nil
	case proxy.TypeDate:
		d, err := proxy.AsTime(v)
		if err != nil {
			return sqltypes.Value{}, err
		}
		return sqltypes.NewDate(d.Format(time.DateOnly)), nil
	case proxy.TypeDateTime:
		d, err := proxy.AsTime(v)
		if err != nil {
			return sqltypes.Value{}, err
		}
		layout := time.DateTime
		if d.Nanosecond() != 0 {
			layout = "2006-01-02 15:04:05.000000"
		}
		return sqltypes.NewDatetime(d.Format(layout)), nil
	case proxy.TypeNull:
		return sqltypes.Value{}, fmt.Errorf("a NULL-typed column holds %T", v)
	default:
		s, err := asString(v)
		if err != nil {
			return sqltypes.Value{}, err
		}
		return sqltypes.NewVarChar(s), nil
	}
}

func asString(v proxy.Value) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case float64:
		return string(sqltypes.NewFloat64(x).Raw()), nil
	case bool:
		return strconv.FormatBool(x), nil
	case time.Time:
		return x.Format(time.RFC3339Nano), nil
	}
	return "", fmt.Errorf("cannot send %T as a string", v)
}
