package policy

import "strings"

// Table looks a table up by name, without regard to case.
func (p *Policy) Table(name string) (*Table, bool) {
	if p == nil {
		return nil, false
	}
	return lookupFold(p.Tables, name)
}

// Column looks a column up by name, without regard to case.
func (t *Table) Column(name string) (*Column, bool) {
	if t == nil {
		return nil, false
	}
	return lookupFold(t.Columns, name)
}

// UnitIsRow reports whether each row of the private table is its own
// privacy unit.
func (t *Table) UnitIsRow() bool {
	return t != nil && !t.Public && strings.EqualFold(t.PrivacyUnit, PrivacyUnitRow)
}

// SameUnit reports whether the privacy units of two private tables identify
// the same people: the same table, or the same declared unit_name.
func (t *Table) SameUnit(o *Table) bool {
	if t == nil || o == nil || t.Public || o.Public || t.UnitIsRow() || o.UnitIsRow() {
		return false
	}
	return t == o || (t.UnitName != "" && strings.EqualFold(t.UnitName, o.UnitName))
}

// User looks a user up by name; user names are case-sensitive.
func (p *Policy) User(name string) (*User, bool) {
	if p == nil {
		return nil, false
	}
	u, ok := p.Users[name]
	return u, ok && u != nil
}

// Role looks a role up by name; role names are case-sensitive.
func (p *Policy) Role(name string) (*Role, bool) {
	if p == nil {
		return nil, false
	}
	r, ok := p.Roles[name]
	return r, ok && r != nil
}

// lookupFold finds name in a map that Validate has keyed in lower case, and
// falls back to a scan for a map built in code and not yet validated.
func lookupFold[V any](m map[string]*V, name string) (*V, bool) {
	if v := m[strings.ToLower(name)]; v != nil {
		return v, true
	}
	for k, v := range m {
		if v != nil && strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}
