package proxy

import (
	"fmt"
	"math"
	"time"
)

// Conversions of result cells to what a column's wire type needs. Both front
// doors encode cells with these, so a value means the same through either.

// AsInt64 reads a cell of an integer column. A float is accepted only when it
// is a whole number in range.
func AsInt64(v Value) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return 0, fmt.Errorf("%d overflows a 64-bit integer column", x)
		}
		return int64(x), nil
	case float64:
		// -2^63 is exact in float64; 2^63 is the first value past MaxInt64.
		if x != math.Trunc(x) || x < math.MinInt64 || x >= math.MaxInt64 {
			return 0, fmt.Errorf("%v is not an integer", x)
		}
		return int64(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("cannot send %T as an integer", v)
}

// AsFloat64 reads a cell of a floating-point column.
func AsFloat64(v Value) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case int:
		return float64(x), nil
	}
	return 0, fmt.Errorf("cannot send %T as a floating-point number", v)
}

// dateLayouts are the ISO forms the engine may use for dates.
var dateLayouts = []string{time.DateTime, "2006-01-02T15:04:05", time.DateOnly, time.RFC3339Nano}

// AsTime reads a cell of a date or datetime column.
func AsTime(v Value) (time.Time, error) {
	var s string
	switch x := v.(type) {
	case time.Time:
		return x, nil
	case string:
		s = x
	case []byte:
		s = string(x)
	default:
		return time.Time{}, fmt.Errorf("cannot send %T as a date", v)
	}
	for _, layout := range dateLayouts {
		// Parsing accepts a fractional second after the seconds even though
		// the layouts do not spell it out.
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO date", s)
}
