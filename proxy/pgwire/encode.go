package pgwire

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/dpproxy/dpproxy/proxy"
)

// Type OIDs and sizes of PostgreSQL's built-in types (pg_type.dat).
const (
	oidBool      = 16
	oidInt8      = 20
	oidInt2      = 21
	oidInt4      = 23
	oidText      = 25
	oidFloat4    = 700
	oidFloat8    = 701
	oidUnknown   = 705
	oidBPChar    = 1042
	oidVarchar   = 1043
	oidDate      = 1082
	oidTimestamp = 1114
	oidNumeric   = 1700
)

// Format codes of the extended protocol.
const (
	formatText   = 0
	formatBinary = 1
)

// pgType is how one engine column type goes on the wire.
type pgType struct {
	oid  uint32
	size int16 // pg_type.typlen; -1 for variable length
}

func typeOf(t proxy.ColumnType) pgType {
	switch t {
	case proxy.TypeInt:
		return pgType{oidInt8, 8}
	case proxy.TypeFloat:
		return pgType{oidFloat8, 8}
	case proxy.TypeDate:
		return pgType{oidDate, 4}
	case proxy.TypeDateTime:
		return pgType{oidTimestamp, 8}
	default: // TypeString, TypeNull (PostgreSQL types an untyped NULL as text)
		return pgType{oidText, -1}
	}
}

// rowDescription describes cols; formats are the portal's result formats,
// already expanded to one per column (nil: all text, as for a statement).
func rowDescription(cols []proxy.Column, formats []int16) *pgproto3.RowDescription {
	fields := make([]pgproto3.FieldDescription, len(cols))
	for i, c := range cols {
		t := typeOf(c.Type)
		fields[i] = pgproto3.FieldDescription{
			Name:         []byte(c.Name),
			DataTypeOID:  t.oid,
			DataTypeSize: t.size,
			TypeModifier: -1,
		}
		if formats != nil {
			fields[i].Format = formats[i]
		}
	}
	return &pgproto3.RowDescription{Fields: fields}
}

// resultFormats expands a Bind message's result format codes to one per
// column: none means all text, one applies to all, else one each.
func resultFormats(codes []int16, ncols int) ([]int16, error) {
	out := make([]int16, ncols)
	switch len(codes) {
	case 0:
	case 1:
		for i := range out {
			out[i] = codes[0]
		}
	case ncols:
		copy(out, codes)
	default:
		return nil, errorf(stateProtocol, "bind message has %d result formats but query has %d columns", len(codes), ncols)
	}
	for _, f := range out {
		if f != formatText && f != formatBinary {
			return nil, errorf(stateProtocol, "unsupported format code: %d", f)
		}
	}
	return out, nil
}

// encodeRows converts every row before anything is sent, so that a value
// the engine got wrong is an error instead of half a result.
func encodeRows(r *proxy.Result, formats []int16) ([]*pgproto3.DataRow, error) {
	out := make([]*pgproto3.DataRow, len(r.Rows))
	for i, row := range r.Rows {
		if len(row) != len(r.Columns) {
			return nil, fmt.Errorf("pgwire: row %d has %d values for %d columns", i, len(row), len(r.Columns))
		}
		vals := make([][]byte, len(row))
		for j, v := range row {
			f := int16(formatText)
			if formats != nil {
				f = formats[j]
			}
			b, err := encodeValue(r.Columns[j].Type, f, v)
			if err != nil {
				return nil, fmt.Errorf("pgwire: row %d, column %q: %w", i, r.Columns[j].Name, err)
			}
			vals[j] = b
		}
		out[i] = &pgproto3.DataRow{Values: vals}
	}
	return out, nil
}

// pgEpoch is the origin of PostgreSQL's binary dates and timestamps.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

const secondsPerDay = 24 * 60 * 60

// encodeValue writes one cell in its column's type; nil is NULL.
func encodeValue(t proxy.ColumnType, format int16, v proxy.Value) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	binary := format == formatBinary
	switch t {
	case proxy.TypeInt:
		i, err := proxy.AsInt64(v)
		if err != nil {
			return nil, err
		}
		if binary {
			return be64(uint64(i)), nil
		}
		return strconv.AppendInt(nil, i, 10), nil
	case proxy.TypeFloat:
		f, err := proxy.AsFloat64(v)
		if err != nil {
			return nil, err
		}
		if binary {
			return be64(math.Float64bits(f)), nil
		}
		return []byte(formatFloat(f)), nil
	case proxy.TypeDate:
		d, err := proxy.AsTime(v)
		if err != nil {
			return nil, err
		}
		if binary {
			y, m, day := d.Date()
			// Seconds, not a time.Duration, which overflows past 292 years.
			days := (time.Date(y, m, day, 0, 0, 0, 0, time.UTC).Unix() - pgEpoch.Unix()) / secondsPerDay
			if days < math.MinInt32 || days > math.MaxInt32 {
				return nil, fmt.Errorf("date %s is out of range", d.Format(time.DateOnly))
			}
			return binaryInt32(int32(days)), nil
		}
		return []byte(d.Format(time.DateOnly)), nil
	case proxy.TypeDateTime:
		d, err := proxy.AsTime(v)
		if err != nil {
			return nil, err
		}
		if binary {
			// Wall-clock time: timestamp without time zone.
			wall := time.Date(d.Year(), d.Month(), d.Day(), d.Hour(), d.Minute(), d.Second(), d.Nanosecond(), time.UTC)
			micros := (wall.Unix()-pgEpoch.Unix())*1e6 + int64(wall.Nanosecond()/1e3)
			return be64(uint64(micros)), nil
		}
		return []byte(d.Format("2006-01-02 15:04:05.999999")), nil
	case proxy.TypeNull:
		return nil, fmt.Errorf("a NULL-typed column holds %T", v)
	default:
		s, err := asString(v)
		if err != nil {
			return nil, err
		}
		return []byte(s), nil
	}
}

func be64(u uint64) []byte { return binary.BigEndian.AppendUint64(nil, u) }

func binaryInt32(i int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(i)) }

// formatFloat prints a float8 as PostgreSQL 12+ does with its default
// extra_float_digits = 1: the shortest digits that read back exactly
// (Ryu), positional for decimal exponents from -4 to 14 and scientific
// outside (float8out → double_to_shortest_decimal), so a noisy count of
// 1234567 reads "1234567", not Go's "1.234567e+06".
func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0"
		}
		return "0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, err := strconv.Atoi(e[strings.LastIndexByte(e, 'e')+1:])
	if err == nil && exp >= -4 && exp < 15 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return e
}

// asString prints a cell of a text column; booleans as PostgreSQL's text
// form of bool does.
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
		return formatFloat(x), nil
	case bool:
		if x {
			return "t", nil
		}
		return "f", nil
	case time.Time:
		return x.Format(time.RFC3339Nano), nil
	}
	return "", fmt.Errorf("cannot send %T as text", v)
}

// commandTag is the CommandComplete tag of a result. Rows give
// "SELECT <n>" with the rows sent; any other result uses the engine's
// Info as the tag (it names the command: "SET", "BEGIN", "SHOW"...), "OK"
// when it gives none. This package never looks at the SQL to find one.
func commandTag(r *proxy.Result, rows int) string {
	if r.Columns != nil {
		return "SELECT " + strconv.Itoa(rows)
	}
	if r.Info != "" {
		return r.Info
	}
	return "OK"
}
