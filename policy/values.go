package policy

import (
	"fmt"
	"math"
	"time"
)

// dateLayout is how date public values and bounds are written.
const dateLayout = time.DateOnly

// isDateValue reports whether a bound as written in YAML is a date.
func isDateValue(v any) bool {
	switch x := v.(type) {
	case time.Time:
		return true
	case string:
		_, err := time.Parse(dateLayout, x)
		return err == nil
	}
	return false
}

// boundValue converts a bound as written in YAML to a number: the value of
// a numeric column, days since 1970-01-01 for a date column (DateDays).
func boundValue(v any, t ColumnType) (float64, error) {
	if t == TypeDate {
		d, err := convertValue(v, TypeDate)
		if err != nil {
			return 0, err
		}
		days, _ := DateDays(d.(string))
		return float64(days), nil
	}
	if !isNumber(v) {
		return 0, fmt.Errorf("is a %s, not a number (a date bound needs type: date and YYYY-MM-DD)", kind(v))
	}
	f, err := convertValue(v, TypeFloat)
	if err != nil {
		return 0, err
	}
	return f.(float64), nil
}

func isNumber(v any) bool {
	switch v.(type) {
	case int, int32, int64, uint32, uint64, float32, float64:
		return true
	}
	return false
}

// DateDays is the number of days from 1970-01-01 to a date written
// YYYY-MM-DD (negative before).
func DateDays(date string) (int64, error) {
	t, err := time.Parse(dateLayout, date)
	if err != nil {
		return 0, fmt.Errorf("%q is not a date written YYYY-MM-DD", date)
	}
	return t.Unix() / 86400, nil
}

// DaysDate is the inverse of DateDays.
func DaysDate(days int64) string {
	return time.Unix(days*86400, 0).UTC().Format(dateLayout)
}

// inferType picks the type of a column written without one: int when both
// bounds are whole numbers, float when a bound has a fraction, the common
// type of its public values when they share one, and string otherwise.
func inferType(c *Column) ColumnType {
	if c.Lower != nil && c.Upper != nil {
		if *c.Lower == math.Trunc(*c.Lower) && *c.Upper == math.Trunc(*c.Upper) {
			return TypeInt
		}
		return TypeFloat
	}
	var t ColumnType
	for _, v := range c.PublicValues {
		vt := valueType(v)
		switch {
		case t == "":
			t = vt
		case t == TypeInt && vt == TypeFloat, t == TypeFloat && vt == TypeInt:
			t = TypeFloat
		case t != vt:
			return TypeString
		}
	}
	if t == "" {
		return TypeString
	}
	return t
}

// valueType is the column type a YAML scalar looks like.
func valueType(v any) ColumnType {
	switch v.(type) {
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return TypeInt
	case float32, float64:
		return TypeFloat
	case bool:
		return TypeBool
	default:
		return TypeString
	}
}

// maxExactInt is 2⁵³: above it not every integer is a float64.
const maxExactInt = 1 << 53

// convertValue converts a public value as the YAML library decoded it (or
// as code set it) to the Go type of t. It refuses to guess across kinds: a
// number for a string column may have lost its leading zeros ("01" → 1),
// so it must be quoted.
func convertValue(v any, t ColumnType) (any, error) {
	switch t {
	case TypeInt:
		switch x := v.(type) {
		case int:
			return int64(x), nil
		case int32:
			return int64(x), nil
		case int64:
			return x, nil
		case uint32:
			return int64(x), nil
		case uint64:
			if x > math.MaxInt64 {
				return nil, fmt.Errorf("is too large for an int column")
			}
			return int64(x), nil
		case float64:
			if x != math.Trunc(x) || math.Abs(x) > maxExactInt {
				return nil, fmt.Errorf("is not a whole number, as an int column needs")
			}
			return int64(x), nil
		}
		return nil, fmt.Errorf("is a %s, not the whole number an int column needs", kind(v))
	case TypeFloat:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case float32:
			f = float64(x)
		case int:
			f = float64(x)
		case int64:
			f = float64(x)
		case uint64:
			f = float64(x)
		default:
			return nil, fmt.Errorf("is a %s, not the number a float column needs", kind(v))
		}
		if !finite(f) {
			return nil, fmt.Errorf("is not a finite number")
		}
		return f, nil
	case TypeString:
		if s, ok := v.(string); ok {
			return s, nil
		}
		return nil, fmt.Errorf("is a %s; a string column needs text (quote it: \"%v\")", kind(v), v)
	case TypeDate:
		switch x := v.(type) {
		case string:
			if _, err := time.Parse(dateLayout, x); err != nil {
				return nil, fmt.Errorf("is not a date written YYYY-MM-DD")
			}
			return x, nil
		case time.Time:
			return x.Format(dateLayout), nil
		}
		return nil, fmt.Errorf("is a %s, not a date written YYYY-MM-DD", kind(v))
	case TypeBool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, fmt.Errorf("is a %s, not the true or false a bool column needs", kind(v))
	}
	return nil, fmt.Errorf("column type %q is unknown", t)
}

// kind names a value's kind for an error message.
func kind(v any) string {
	switch valueType(v) {
	case TypeInt, TypeFloat:
		return "number"
	case TypeBool:
		return "boolean"
	}
	if v == nil {
		return "null"
	}
	if _, ok := v.(string); ok {
		return "string"
	}
	return fmt.Sprintf("%T", v)
}
