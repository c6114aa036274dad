package policy

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// users and table are valid fragments that cases below break one key at a
// time.
const roleAndUser = `roles:
  r: {budget: {epsilon: 1, delta: 0}}
users:
  bob: {password: pw, role: r}
`

func TestValidationRules(t *testing.T) {
	mysqlHashOfPW := "*" + strings.Repeat("A", 40) // not the hash of "pw"
	for _, tc := range []struct {
		name, src string
		line      int // 0: do not check
		want      string
	}{
		// backend and listen
		{"driver missing", "backend: {dsn: x}\n", 1, "backend.driver is required"},
		{"driver unknown", "backend: {driver: oracle, dsn: x}\n", 1, `backend.driver "oracle" is not one of mysql, sqlite, postgres`},
		{"dsn missing", "backend:\n  driver: mysql\n", 1, "backend.dsn is required"},
		{"max_open_conns negative", minimal + "  max_open_conns: -1\n", 4, "backend.max_open_conns must not be negative"},
		{"listen address", minimal + "listen: {mysql: localhost}\n", 4, `listen.mysql address "localhost" is not host:port`},

		// defaults
		{"epsilon negative", minimal + "defaults: {epsilon: -1}\n", 4, "defaults.epsilon must be a finite number above 0"},
		{"epsilon infinite", minimal + "defaults: {epsilon: .inf}\n", 4, "defaults.epsilon must be a finite number above 0"},
		{"delta one", minimal + "defaults: {delta: 1}\n", 4, "defaults.delta must be at least 0 and below 1"},
		{"delta negative", minimal + "defaults: {delta: -0.1}\n", 4, "defaults.delta must be at least 0 and below 1"},
		{"mechanism unknown", minimal + "defaults: {mechanism: cauchy}\n", 4, `defaults.mechanism "cauchy" is not one of laplace, gaussian`},
		{"gaussian without delta", minimal + "defaults: {mechanism: gaussian, delta: 0}\n", 4, "gaussian needs defaults.delta above 0"},

		// limits and tls
		{"max_connections negative", minimal + "limits: {max_connections: -1}\n", 4, "limits.max_connections must not be negative"},
		{"max_groups negative", minimal + "limits: {max_groups: -5}\n", 4, "limits.max_groups must not be negative"},
		{"timeout negative", minimal + "limits: {query_timeout: -5s}\n", 4, "limits.query_timeout must not be negative"},
		{"tls without key", minimal + "tls: {cert: c.pem}\n", 4, "tls needs both cert and key"},

		// roles
		{"role budget missing", minimal + "roles:\n  r: {admin: true}\n", 5, `role "r" budget epsilon must be a finite number above 0, got 0`},
		{"role delta one", minimal + "roles:\n  r:\n    budget: {epsilon: 1, delta: 1}\n", 6, `role "r" budget delta must be at least 0 and below 1`},
		{"role per-query epsilon negative", minimal + "roles:\n  r:\n    budget: {epsilon: 1}\n    max_epsilon_per_query: -1\n", 7, `role "r" max_epsilon_per_query must be a finite number, 0 or above`},
		{"role per-query delta one", minimal + "roles:\n  r:\n    budget: {epsilon: 1}\n    max_delta_per_query: 1\n", 7, `role "r" max_delta_per_query must be at least 0 and below 1`},
		{"role pool invalid", minimal + "roles:\n  r:\n    budget: {epsilon: 1}\n    pool: {delta: 0.5}\n", 7, `role "r" pool epsilon must be a finite number above 0`},

		// users
		{"user without role", minimal + roleAndUser + "  carol: {password: x}\n", 8, `user "carol" needs a role`},
		{"user with unknown role", minimal + roleAndUser + "  carol: {password: x, role: nope}\n", 8, `user "carol" has role "nope", which the policy does not define`},
		{"user without password", minimal + roleAndUser + "  carol: {role: r}\n", 8, `user "carol" needs a password or password_hashes`},
		{"mysql hash too short", minimal + roleAndUser + "  carol: {role: r, password_hashes: [\"*ABC\"]}\n", 8, `password_hashes[0]: a MySQL native hash is "*" and 40 hex digits`},
		{"mysql hash not hex", minimal + roleAndUser + "  carol: {role: r, password_hashes: [\"*" + strings.Repeat("G", 40) + "\"]}\n", 8, "not a hex digit"},
		{"hash of unknown kind", minimal + roleAndUser + "  carol: {role: r, password_hashes: [\"md5abc\"]}\n", 8, "password_hashes[0] is neither a MySQL native hash"},
		{"scram hash malformed", minimal + roleAndUser + "  carol: {role: r, password_hashes: [\"SCRAM-SHA-256$4096:c2FsdA==$AAAA:BBBB\"]}\n", 8, "keys that are not base64 of 32 bytes each"},
		{"scram iterations zero", minimal + roleAndUser + "  carol: {role: r, password_hashes: [\"SCRAM-SHA-256$0:c2FsdA==$a:b\"]}\n", 8, `has iterations "0"`},
		{"two mysql hashes", minimal + roleAndUser + "  carol: {role: r, password_hashes: [\"" + mysqlHashOfPW + "\", \"" + mysqlHashOfPW + "\"]}\n", 8, "password_hashes[1] is a second MySQL native hash"},
		{"hash disagrees with password", minimal + roleAndUser + "  carol: {role: r, password: pw, password_hashes: [\"" + mysqlHashOfPW + "\"]}\n", 8, "not of the plain password"},

		// tables
		{"private without unit", minimal + "tables:\n  t:\n    columns: {a: {type: int}}\n", 5, `table "t" is private and needs a privacy_unit`},
		{"row unit with two rows", minimal + "tables:\n  t:\n    privacy_unit: row\n    max_rows_per_unit: 2\n", 7, `table "t" has privacy_unit row, so max_rows_per_unit can only be 1, got 2`},
		{"column unit without max rows", minimal + "tables:\n  t:\n    privacy_unit: pid\n", 5, `table "t" needs max_rows_per_unit (1 or more)`},
		{"negative max rows", minimal + "tables:\n  t:\n    privacy_unit: pid\n    max_rows_per_unit: -1\n", 7, `table "t" max_rows_per_unit must be 1 or more, got -1`},
		{"negative max groups", minimal + "tables:\n  t:\n    privacy_unit: row\n    max_groups_per_unit: -1\n", 7, `table "t" max_groups_per_unit must be 1 or more, got -1`},
		{"public with unit", minimal + "tables:\n  t:\n    public: true\n    privacy_unit: pid\n", 6, `table "t" is public, so it takes no privacy_unit`},
		{"public with unit name", minimal + "tables:\n  t:\n    public: true\n    unit_name: person\n", 6, `table "t" is public, so it takes no privacy_unit, unit_name`},
		{"row unit with unit name", minimal + "tables:\n  t:\n    privacy_unit: row\n    unit_name: person\n", 7, `table "t" has privacy_unit row: no column identifies its people, so it takes no unit_name`},
		{"tables differing in case", minimal + "tables:\n  T: {public: true}\n  t: {public: true}\n", 0, `tables "T" and "t" differ only in case`},
		{"columns differing in case", minimal + "tables:\n  t:\n    public: true\n    columns: {A: {}, a: {}}\n", 0, `columns "A" and "a" differ only in case`},
		{"public values of the unit", minimal + "tables:\n  t:\n    privacy_unit: pid\n    max_rows_per_unit: 1\n    columns:\n      pid: {type: int, public_values: [1, 2]}\n", 9, "column t.pid is the privacy unit, so its values cannot be public"},

		// columns
		{"column type unknown", minimal + "tables:\n  t:\n    public: true\n    columns:\n      a: {type: decimal}\n", 8, `column t.a has type "decimal"`},
		{"only lower", minimal + "tables:\n  t:\n    public: true\n    columns:\n      a: {type: int, lower: 0}\n", 8, "column t.a needs both lower and upper, or neither"},
		{"lower above upper", minimal + "tables:\n  t:\n    public: true\n    columns:\n      a: {type: int, lower: 5, upper: 1}\n", 8, "column t.a lower bound 5 is above its upper bound 1"},
		{"bounds infinite", minimal + "tables:\n  t:\n    public: true\n    columns:\n      a: {type: float, lower: -.inf, upper: 1}\n", 8, "column t.a lower bound -Inf is not a finite number"},
		{"bounds on a string", minimal + "tables:\n  t:\n    public: true\n    columns:\n      a: {type: string, lower: 0, upper: 1}\n", 8, "column t.a is of type string and so cannot have bounds"},
		{"string in an int domain", minimal + "tables:\n  t:\n    public: true\n    columns:\n      a: {type: int, public_values: [1, x]}\n", 8, "column t.a public value x is a string, not the whole number an int column needs"},
		{"fraction in an int domain", minimal + "tables:\n  t:\n    public: true\n    columns:\n      a: {type: int, public_values: [1.5]}\n", 8, "column t.a public value 1.5 is not a whole number"},
		{"number in a string domain", minimal + "tables:\n  t:\n    public: true\n    columns:\n      a: {type: string, public_values: [01]}\n", 8, "a string column needs text"},
		{"bad date", minimal + "tables:\n  t:\n    public: true\n    columns:\n      a: {type: date, public_values: [\"2020-13-01\"]}\n", 8, "is not a date written YYYY-MM-DD"},
		{"number in a bool domain", minimal + "tables:\n  t:\n    public: true\n    columns:\n      a: {type: bool, public_values: [1]}\n", 8, "not the true or false a bool column needs"},
		{"nan in a float domain", minimal + "tables:\n  t:\n    public: true\n    columns:\n      a: {type: float, public_values: [.nan]}\n", 8, "is not a finite number"},
		{"duplicate public value", minimal + "tables:\n  t:\n    public: true\n    columns:\n      a: {type: float, public_values: [1, 1.0]}\n", 8, "column t.a lists public value 1 twice"},
		{"unique with public values", minimal + "tables:\n  t:\n    public: true\n    columns:\n      a: {type: int, unique: true, public_values: [1]}\n", 8, "column t.a is unique"},
		{"too many public values", minimal + "tables:\n  t:\n    public: true\n    columns:\n      a:\n        type: int\n        public_values: [" + intList(10001) + "]\n", 10, "column t.a has 10001 public_values, more than the 10000 allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src))
			if err == nil {
				t.Fatalf("accepted:\n%s", tc.src)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
			if tc.line == 0 {
				return
			}
			if want := fmt.Sprintf("line %d: ", tc.line); !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name line %d", err, tc.line)
			}
		})
	}
}

func intList(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprint(i)
	}
	return strings.Join(s, ", ")
}

// The fragments the rule cases break are valid as written, so each failure
// above is the rule's doing.
func TestValidFragments(t *testing.T) {
	for _, src := range []string{
		minimal + roleAndUser,
		minimal + "tables:\n  t:\n    public: true\n    columns: {a: {type: int, lower: 0, upper: 1, public_values: [1, 2]}}\n",
		minimal + "tables:\n  t:\n    privacy_unit: pid\n    max_rows_per_unit: 1\n    columns:\n      pid: {type: int, unique: true}\n",
		minimal + "tables:\n  t:\n    public: true\n    columns:\n      a:\n        type: int\n        public_values: [" + intList(10000) + "]\n",
		minimal + "defaults: {mechanism: gaussian}\nlimits: {query_timeout: 5s}\ntls: {cert: c.pem, key: k.pem}\nlisten: {mysql: \":3307\", postgres: \"[::1]:5433\"}\n",
	} {
		if _, err := Parse([]byte(src)); err != nil {
			t.Errorf("%v\n%s", err, src)
		}
	}
}

func TestAllProblemsReportedInFileOrder(t *testing.T) {
	_, err := Parse([]byte("backend: {driver: oracle}\ntables:\n  t: {privacy_unit: row, max_rows_per_unit: 3}\n"))
	var ps problems
	if !errors.As(err, &ps) || len(ps) != 3 {
		t.Fatalf("err = %v, want 3 problems", err)
	}
	if lineOf(ps[0]) != 1 || lineOf(ps[1]) != 1 || lineOf(ps[2]) != 3 {
		t.Errorf("problems out of file order: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "policy: 3 problems:\n\t") {
		t.Errorf("error = %q", err)
	}
}

func TestTableDefaultsAndNames(t *testing.T) {
	p, err := Parse([]byte(minimal + `tables:
  Visits:
    privacy_unit: Person_ID
    max_rows_per_unit: 5
    columns:
      Day: {type: DATE, public_values: ["2024-01-01", "2024-01-02"]}
      cost: {lower: 0, upper: 9.5}
      n: {lower: 0, upper: 10}
      kind: {public_values: [a, b]}
      flag: {public_values: [true, false]}
      ratio: {type: float, public_values: [1, 2.5]}
      note: {}
`))
	if err != nil {
		t.Fatal(err)
	}
	v, ok := p.Table("visits")
	if !ok || v.Name != "visits" || v.PrivacyUnit != "person_id" || v.MaxGroupsPerUnit != 1 || v.UnitIsRow() {
		t.Fatalf("visits = %+v", v)
	}
	for _, tc := range []struct {
		col    string
		typ    ColumnType
		values []any
	}{
		{"day", TypeDate, []any{"2024-01-01", "2024-01-02"}},
		{"cost", TypeFloat, nil},
		{"n", TypeInt, nil},
		{"kind", TypeString, []any{"a", "b"}},
		{"flag", TypeBool, []any{true, false}},
		{"ratio", TypeFloat, []any{1.0, 2.5}},
		{"note", TypeString, nil},
	} {
		c, ok := v.Column(tc.col)
		if !ok || c.Name != tc.col || c.Type != tc.typ || !reflect.DeepEqual(c.PublicValues, tc.values) {
			t.Errorf("column %s = %+v, want type %s values %#v", tc.col, c, tc.typ, tc.values)
		}
	}
}

func TestDateBounds(t *testing.T) {
	p, err := Parse([]byte(minimal + `tables:
  visits:
    privacy_unit: pid
    max_rows_per_unit: 5
    columns:
      admitted: {type: date, lower: 2015-01-01, upper: "2024-12-31"}
      discharged: {lower: "1970-01-02", upper: 2024-12-31}
`))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := p.Table("visits")
	a, _ := v.Column("admitted")
	d, _ := v.Column("discharged")
	// 2015-01-01 is day 16436 after 1970-01-01; 2024-12-31 is day 20088.
	if !a.Bounded() || *a.Lower != 16436 || *a.Upper != 20088 {
		t.Errorf("admitted = %+v, want days [16436, 20088]", a)
	}
	if d.Type != TypeDate || *d.Lower != 1 {
		t.Errorf("discharged = %+v, want a date column from day 1 (its bounds are dates)", d)
	}
	if got := DaysDate(20088); got != "2024-12-31" {
		t.Errorf("DaysDate(20088) = %s", got)
	}
	for _, tc := range []struct{ src, want string }{
		{"      a: {type: date, lower: 2024-13-01, upper: 2025-01-01}\n", "column visits.a lower bound 2024-13-01 is not a date written YYYY-MM-DD"},
		{"      a: {type: int, lower: 2024-01-01, upper: 3}\n", "not a number (a date bound needs type: date"},
		{"      a: {type: string, lower: 1, upper: 3}\n", "only int, float and date columns can"},
	} {
		_, err := Parse([]byte(minimal + "tables:\n  visits:\n    privacy_unit: row\n    columns:\n" + tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.src, err, tc.want)
		}
	}
}

func TestValidateBuiltInCode(t *testing.T) {
	lower, upper := 0.0, 10.0
	p := &Policy{
		Backend: Backend{Driver: "SQLite", DSN: ":memory:"},
		Roles:   map[string]*Role{"r": {Budget: Budget{Epsilon: 1}}},
		Users:   map[string]*User{"u": {Password: "pw", Role: "r"}},
		Tables: map[string]*Table{"T": {PrivacyUnit: "row", Columns: map[string]*Column{
			"X": {Lower: &lower, Upper: &upper, PublicValues: []any{1, 2}},
		}}},
	}
	if _, ok := p.Table("t"); !ok {
		t.Error("lookup before Validate must still fold case")
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	// No delta default in code: 0 is pure ε-DP and must stay.
	if p.Backend.Driver != "sqlite" || p.Defaults.Delta != 0 || p.Defaults.Epsilon != 1 {
		t.Errorf("backend %+v defaults %+v", p.Backend, p.Defaults)
	}
	tb, _ := p.Table("T")
	x, _ := tb.Column("x")
	if tb.Name != "t" || x.Name != "x" || x.Type != TypeInt || !reflect.DeepEqual(x.PublicValues, []any{int64(1), int64(2)}) {
		t.Errorf("table %+v column %+v", tb, x)
	}
	if r, _ := p.Role("r"); r.Name != "r" {
		t.Errorf("role name %q", r.Name)
	}
	// Validate twice gives the same policy (public values are converted
	// already).
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}

	p.Roles["r"].Budget.Epsilon = math.NaN()
	err := p.Validate()
	if err == nil || !strings.Contains(err.Error(), `role "r" budget epsilon`) || strings.Contains(err.Error(), "line") {
		t.Errorf("err = %v, want a role error without a line", err)
	}
}
