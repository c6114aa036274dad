package policy

import (
	"maps"
	"slices"
	"strings"
)

// maxPublicValues bounds a column's public domain: every public value of a
// GROUP BY key is released, so the domain is also the answer's row count.
const maxPublicValues = 10000

var columnTypes = []ColumnType{TypeInt, TypeFloat, TypeString, TypeDate, TypeBool}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// lowerKeys re-keys m by lower-cased key (SQL identifiers are matched
// without regard to case), reporting keys that differ only in case.
func lowerKeys[V any](v *validator, m map[string]V, what string, at []string) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	first := make(map[string]string, len(m))
	for _, k := range sortedKeys(m) {
		lk := strings.ToLower(k)
		if prev, dup := first[lk]; dup {
			v.fail(append(at[:len(at):len(at)], k), "%ss %q and %q differ only in case, and names are matched without regard to case", what, prev, k)
			continue
		}
		first[lk] = k
		out[lk] = m[k]
	}
	return out
}

func (v *validator) tables(tables map[string]*Table) map[string]*Table {
	tables = lowerKeys(v, tables, "table", path("tables"))
	for _, name := range sortedKeys(tables) {
		t := tables[name]
		if t == nil {
			t = new(Table)
			tables[name] = t
		}
		t.Name = name
		v.table(t)
	}
	return tables
}

func (v *validator) table(t *Table) {
	at := func(key ...string) []string { return append(path("tables", t.Name), key...) }
	t.PrivacyUnit = strings.ToLower(strings.TrimSpace(t.PrivacyUnit))
	t.UnitName = strings.ToLower(strings.TrimSpace(t.UnitName))
	t.Columns = lowerKeys(v, t.Columns, "column", at("columns"))
	for _, name := range sortedKeys(t.Columns) {
		c := t.Columns[name]
		if c == nil {
			c = new(Column)
			t.Columns[name] = c
		}
		c.Name = name
		v.column(t, c)
	}

	if t.Public {
		// A public table has no persons in it, so a privacy unit or
		// contribution bound there is a misunderstanding worth pointing out.
		if t.PrivacyUnit != "" || t.MaxRowsPerUnit != 0 || t.MaxGroupsPerUnit != 0 || t.UnitName != "" {
			v.fail(at("public"), "table %q is public, so it takes no privacy_unit, unit_name, max_rows_per_unit or max_groups_per_unit", t.Name)
		}
		return
	}

	switch {
	case t.PrivacyUnit == "":
		v.fail(at(), "table %q is private and needs a privacy_unit: the column that identifies a person, or %q when each row is its own person", t.Name, PrivacyUnitRow)
	case t.PrivacyUnit == PrivacyUnitRow:
		// Neighbouring databases differ in one row, so one unit has exactly
		// one row to contribute.
		if t.UnitName != "" {
			v.fail(at("unit_name"), "table %q has privacy_unit row: no column identifies its people, so it takes no unit_name", t.Name)
		}
		switch t.MaxRowsPerUnit {
		case 0:
			t.MaxRowsPerUnit = 1
		case 1:
		default:
			v.fail(at("max_rows_per_unit"), "table %q has privacy_unit row, so max_rows_per_unit can only be 1, got %d", t.Name, t.MaxRowsPerUnit)
		}
	default:
		switch {
		case t.MaxRowsPerUnit == 0:
			v.fail(at(), "table %q needs max_rows_per_unit (1 or more): how many rows of one %s may reach an aggregate", t.Name, t.PrivacyUnit)
		case t.MaxRowsPerUnit < 0:
			v.fail(at("max_rows_per_unit"), "table %q max_rows_per_unit must be 1 or more, got %d", t.Name, t.MaxRowsPerUnit)
		}
		if c := t.Columns[t.PrivacyUnit]; c != nil && len(c.PublicValues) > 0 {
			v.fail(at("columns", c.Name, "public_values"), "column %s.%s is the privacy unit, so its values cannot be public", t.Name, c.Name)
		}
	}
	switch {
	case t.MaxGroupsPerUnit == 0:
		t.MaxGroupsPerUnit = 1
	case t.MaxGroupsPerUnit < 0:
		v.fail(at("max_groups_per_unit"), "table %q max_groups_per_unit must be 1 or more, got %d", t.Name, t.MaxGroupsPerUnit)
	}
}

func (v *validator) column(t *Table, c *Column) {
	at := func(key ...string) []string { return append(path("tables", t.Name, "columns", c.Name), key...) }
	full := t.Name + "." + c.Name

	c.Type = ColumnType(strings.ToLower(strings.TrimSpace(string(c.Type))))
	if c.Type == "" && (isDateValue(c.LowerValue) || isDateValue(c.UpperValue)) {
		c.Type = TypeDate
	}
	for _, b := range []struct {
		key string
		raw any
		out **float64
	}{{"lower", c.LowerValue, &c.Lower}, {"upper", c.UpperValue, &c.Upper}} {
		if b.raw == nil {
			continue
		}
		f, err := boundValue(b.raw, c.Type)
		if err != nil {
			v.fail(at(b.key), "column %s %s bound %v %v", full, b.key, b.raw, err)
			return
		}
		*b.out = &f
	}
	if c.Type == "" {
		c.Type = inferType(c)
	}
	if !slices.Contains(columnTypes, c.Type) {
		v.fail(at("type"), "column %s has type %q, which is not one of int, float, string, date, bool", full, c.Type)
		return
	}

	switch {
	case (c.Lower == nil) != (c.Upper == nil):
		v.fail(at(), "column %s needs both lower and upper, or neither", full)
	case c.Lower != nil && c.Type != TypeInt && c.Type != TypeFloat && c.Type != TypeDate:
		v.fail(at("lower"), "column %s is of type %s and so cannot have bounds; only int, float and date columns can", full, c.Type)
	case c.Lower != nil && (!finite(*c.Lower) || !finite(*c.Upper)):
		v.fail(at("lower"), "column %s bounds must be finite numbers, got lower %v and upper %v", full, *c.Lower, *c.Upper)
	case c.Lower != nil && *c.Lower > *c.Upper:
		v.fail(at("lower"), "column %s lower bound %v is above its upper bound %v", full, *c.Lower, *c.Upper)
	}

	if len(c.PublicValues) == 0 {
		return
	}
	if c.Unique {
		v.fail(at("public_values"), "column %s is unique (it identifies rows), so it cannot have public_values", full)
		return
	}
	if len(c.PublicValues) > maxPublicValues {
		v.fail(at("public_values"), "column %s has %d public_values, more than the %d allowed", full, len(c.PublicValues), maxPublicValues)
		return
	}
	seen := make(map[any]bool, len(c.PublicValues))
	for i, raw := range c.PublicValues {
		val, err := convertValue(raw, c.Type)
		if err != nil {
			v.fail(at("public_values"), "column %s public value %v %v", full, raw, err)
			continue
		}
		if seen[val] {
			v.fail(at("public_values"), "column %s lists public value %v twice", full, val)
			continue
		}
		seen[val] = true
		c.PublicValues[i] = val
	}
}
