package eval

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

const (
	dateLayout     = "2006-01-02"
	dateTimeLayout = "2006-01-02 15:04:05"
)

// castTo converts v to one of the parser's normalised CAST types. The model
// keeps no length or scale (CHAR(60), DECIMAL(10,2)), so "string" does not
// truncate and "decimal" keeps integers as int64 and everything else as
// float64 without rounding to a scale.
func castTo(v any, typ string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch typ {
	case "int":
		i, _ := ToInt(v)
		return i, nil
	case "float":
		f, _ := ToFloat(v)
		return f, nil
	case "decimal":
		if i, ok := intOf(v); ok {
			return i, nil
		}
		f, _ := ToFloat(v)
		return f, nil
	case "string":
		return ToString(v), nil
	case "date", "datetime":
		t, ok := parseTime(v)
		if !ok {
			return nil, nil // MySQL: NULL with a warning
		}
		if typ == "date" {
			return t.Format(dateLayout), nil
		}
		return t.Format(dateTimeLayout), nil
	case "bool":
		return castBool(v)
	}
	return nil, unsupported("CAST to %s", typ)
}

// parseTime reads a date or datetime from its text ('2024-01-02',
// '2024-01-02 10:00:00[.fff]') or from MySQL's numeric forms 20240102 and
// 20240102100000.
func parseTime(v any) (time.Time, bool) {
	var s string
	var layouts []string
	switch x := v.(type) {
	case string:
		s = strings.TrimSpace(x)
		layouts = []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", dateLayout}
	case int64:
		s = strconv.FormatInt(x, 10)
		layouts = []string{"20060102", "20060102150405"}
	default:
		return time.Time{}, false
	}
	for _, l := range layouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// castBool is PostgreSQL's ::boolean, which accepts the words of its boolean
// input syntax and numbers (non-zero is true).
func castBool(v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		t, _ := Truthy(v)
		return t, nil
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "t", "true", "y", "yes", "on", "1":
		return true, nil
	case "f", "false", "n", "no", "off", "0":
		return false, nil
	}
	return nil, fmt.Errorf("eval: invalid input syntax for type boolean: %q", s)
}
