package rewrite

import (
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
)

// Dates are not numbers, and each SQL dialect turns them into numbers its
// own way (MySQL's date − date subtracts YYYYMMDD integers; SQLite's
// subtracts the leading years of two strings). So dpproxy gives dates two
// numeric forms, the same in every backend:
//
//   - the difference of two date columns, a − b, in days;
//   - a date part, YEAR(d), MONTH(d), DAY(d), also written EXTRACT(YEAR FROM
//     d) or date_part('year', d).
//
// Their public bounds follow from the policy's date bounds (written
// YYYY-MM-DD, kept as days since 1970-01-01): a − b lies in [lo_a − hi_b,
// hi_a − lo_b], YEAR(d) in the years of d's bounds, MONTH in [1, 12], DAY in
// [1, 31] whatever the bounds, so GROUP BY MONTH(d) releases all twelve
// months without partition selection. Any other use of a date column as a
// number has no bound and is refused with this advice.

// datePart recognises a date part: its unit ("year", "month" or "day") and
// argument.
func datePart(f *parser.Func) (unit string, arg parser.Expr, ok bool) {
	if f.Schema != "" || f.Over || f.Distinct || f.Star {
		return "", nil, false
	}
	switch f.Name {
	case "year", "month", "day", "dayofmonth":
		if len(f.Args) != 1 {
			return "", nil, false
		}
		unit = f.Name
		if unit == "dayofmonth" {
			unit = "day"
		}
		return unit, f.Args[0], true
	case "extract", "date_part":
		if len(f.Args) != 2 {
			return "", nil, false
		}
		lit, isLit := f.Args[0].(*parser.Literal)
		if !isLit {
			return "", nil, false
		}
		s, isString := lit.Value.(string)
		if !isString {
			return "", nil, false
		}
		switch u := strings.ToLower(s); u {
		case "year", "month", "day":
			return u, f.Args[1], true
		}
	}
	return "", nil, false
}

// datePartSQL renders a date part as an integer in the dialect.
func (r *renderer) datePartSQL(unit, arg string) string {
	switch r.dialect {
	case parser.MySQL:
		if unit == "day" {
			return "DAYOFMONTH(" + arg + ")"
		}
		return strings.ToUpper(unit) + "(" + arg + ")"
	case parser.PostgreSQL:
		return "CAST(EXTRACT(" + strings.ToUpper(unit) + " FROM " + arg + ") AS INTEGER)"
	}
	format := map[string]string{"year": "%Y", "month": "%m", "day": "%d"}[unit]
	return "CAST(strftime('" + format + "', " + arg + ") AS INTEGER)"
}

// dateDiffSQL renders a − b of two dates in days.
func (r *renderer) dateDiffSQL(a, b string) string {
	switch r.dialect {
	case parser.MySQL:
		return "DATEDIFF(" + a + ", " + b + ")"
	case parser.PostgreSQL:
		return "(" + a + " - " + b + ")"
	}
	return "CAST(julianday(" + a + ") - julianday(" + b + ") AS INTEGER)"
}

// dateColumn reports whether e is a column the policy types as a date, and
// returns its policy entry.
func (a *analysis) dateColumn(e parser.Expr) (*policy.Column, bool) {
	ref, ok := e.(*parser.ColumnRef)
	if !ok || a.table == nil {
		return nil, false
	}
	name, err := a.column(ref)
	if err != nil {
		return nil, false
	}
	col, _ := a.table.Column(name)
	return col, col != nil && col.Type == policy.TypeDate
}

// dateDiffBound is the bound of a − b for two date columns.
func (a *analysis) dateDiffBound(l, r parser.Expr) (interval, bool, error) {
	lc, lok := a.dateColumn(l)
	rc, rok := a.dateColumn(r)
	if !lok || !rok {
		return interval{}, false, nil
	}
	if !lc.Bounded() || !rc.Bounded() {
		return interval{}, true, &noBoundError{exprText(&parser.Binary{Op: parser.OpSub, L: l, R: r}) + " (add lower and upper dates for both columns)"}
	}
	return interval{*lc.Lower - *rc.Upper, *lc.Upper - *rc.Lower, true}, true, nil
}

// datePartBound is the bound of a date part.
func (a *analysis) datePartBound(f *parser.Func, unit string, arg parser.Expr) (interval, error) {
	switch unit {
	case "month":
		return interval{1, 12, true}, nil
	case "day":
		return interval{1, 31, true}, nil
	}
	col, ok := a.dateColumn(arg)
	if !ok || !col.Bounded() {
		return interval{}, &noBoundError{exprText(f) + " (YEAR needs a date column with lower and upper dates)"}
	}
	return interval{float64(dayYear(*col.Lower)), float64(dayYear(*col.Upper)), true}, nil
}

func dayYear(days float64) int {
	return time.Unix(int64(days)*86400, 0).UTC().Year()
}

// dateKeyDomain is the public domain of a date part used as a GROUP BY key.
func (a *analysis) dateKeyDomain(f *parser.Func) ([]any, bool) {
	unit, arg, ok := datePart(f)
	if !ok {
		return nil, false
	}
	b, err := a.datePartBound(f, unit, arg)
	if err != nil || b.hi-b.lo+1 > maxDerivedDomain {
		return nil, true
	}
	var out []any
	for v := b.lo; v <= b.hi; v++ {
		out = append(out, int64(v))
	}
	return out, true
}

// dateMisuse is the error for a date column used as a number.
func dateMisuse(name string) error {
	return &noBoundError{name + " (a date: use the difference of two date columns, in days, or YEAR, MONTH or DAY of it)"}
}
