package policy

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLoadExample(t *testing.T) {
	p, err := Load(filepath.Join("testdata", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Listen.MySQL != "127.0.0.1:3307" || p.Listen.Postgres != "" {
		t.Errorf("listen = %+v", p.Listen)
	}
	if p.Backend.Driver != "mysql" || p.Backend.DSN != "dp:secret@tcp(127.0.0.1:3306)/census" || p.Backend.MaxOpenConns != 32 {
		t.Errorf("backend = %+v", p.Backend)
	}
	if p.Ledger.Path != "/var/lib/dpproxy/ledger" {
		t.Errorf("ledger = %+v", p.Ledger)
	}
	if p.Defaults != (Defaults{Epsilon: 1, Delta: 1e-6, Mechanism: "laplace"}) {
		t.Errorf("defaults = %+v", p.Defaults)
	}
	wantLimits := Limits{MaxConnections: 256, QueryTimeout: Duration{60 * time.Second}, IdleTimeout: Duration{8 * time.Hour}, MaxGroups: 10000,
		MaxStatementBytes: 1 << 20, ResponseQuantum: Duration{100 * time.Millisecond}, HandshakeTimeout: Duration{10 * time.Second}, MaxUnauthenticated: 64, MaxFailedLogins: 20}
	if p.Limits != wantLimits {
		t.Errorf("limits = %+v, want %+v", p.Limits, wantLimits)
	}
	if p.TLS != nil {
		t.Errorf("tls = %+v, want nil", p.TLS)
	}

	analyst, ok := p.Role("analyst")
	if !ok || analyst.Name != "analyst" || analyst.Admin || analyst.Budget != (Budget{10, 1e-5}) || analyst.MaxEpsilonPerQuery != 2 || analyst.Pool != nil {
		t.Errorf("role analyst = %+v", analyst)
	}
	dba, ok := p.Role("dba")
	if !ok || !dba.Admin || dba.Budget != (Budget{100, 1e-4}) {
		t.Errorf("role dba = %+v", dba)
	}
	alice, ok := p.User("alice")
	if !ok || alice.Name != "alice" || alice.Role != "analyst" || !alice.CheckPassword("change-me") || alice.CheckPassword("change-me-too") {
		t.Errorf("user alice = %+v", alice)
	}
	if _, ok := p.User("Alice"); ok {
		t.Error("user names must be case-sensitive")
	}

	pums, ok := p.Table("PUMS")
	if !ok || pums.Name != "pums" || pums.Public || pums.PrivacyUnit != "pid" || pums.UnitIsRow() || pums.MaxRowsPerUnit != 2 || pums.MaxGroupsPerUnit != 2 {
		t.Fatalf("table pums = %+v", pums)
	}
	if len(pums.Columns) != 5 {
		t.Errorf("pums has %d columns, want 5", len(pums.Columns))
	}
	age, ok := pums.Column("Age")
	if !ok || age.Name != "age" || age.Type != TypeInt || !age.Bounded() || *age.Lower != 0 || *age.Upper != 100 {
		t.Errorf("pums.age = %+v", age)
	}
	income, _ := pums.Column("income")
	if income.Type != TypeFloat || *income.Upper != 500000 {
		t.Errorf("pums.income = %+v", income)
	}
	sex, _ := pums.Column("sex")
	if !reflect.DeepEqual(sex.PublicValues, []any{int64(0), int64(1)}) || sex.Bounded() {
		t.Errorf("pums.sex public values = %#v", sex.PublicValues)
	}
	educ, _ := pums.Column("educ")
	if educ.Type != TypeInt || educ.Bounded() || educ.PublicValues != nil {
		t.Errorf("pums.educ = %+v", educ)
	}
	if _, ok := pums.Column("pid"); ok {
		t.Error("pums.pid is not listed and must not be found")
	}

	adult, ok := p.Table("adult")
	if !ok || !adult.UnitIsRow() || adult.MaxRowsPerUnit != 1 || adult.MaxGroupsPerUnit != 1 {
		t.Fatalf("table adult = %+v", adult)
	}
	asex, _ := adult.Column("SEX")
	if asex.Type != TypeString || !reflect.DeepEqual(asex.PublicValues, []any{"Male", "Female"}) {
		t.Errorf("adult.sex = %+v", asex)
	}
	if _, ok := p.Table("nope"); ok {
		t.Error("an unknown table was found")
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want a not-exist error", err)
	}
}

func TestLoadNamesFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(f, []byte("backend: {driver: oracle, dsn: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(f)
	if err == nil || !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), "oracle") {
		t.Fatalf("err = %v, want it to name the file and the driver", err)
	}
}

// minimal is the smallest valid policy; tests append to it.
const minimal = `backend:
  driver: sqlite
  dsn: ":memory:"
`

func TestUnknownKeys(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line      int
		key, path string
	}{
		{"top level", minimal + "listn:\n  mysql: x\n", 4, "listn", "listn"},
		{"nested", minimal + "defaults:\n  epsilon: 1\n  epsilom: 2\n", 6, "epsilom", "defaults.epsilom"},
		{"column bound", minimal + `tables:
  pums:
    privacy_unit: pid
    max_rows_per_unit: 1
    columns:
      age: {type: int, lowr: 0, upper: 100}
`, 9, "lowr", "tables.pums.columns.age.lowr"},
		{"block column", minimal + `tables:
  pums:
    privacy_unit: row
    columns:
      age:
        type: int
        lowr: 0
`, 10, "lowr", "tables.pums.columns.age.lowr"},
		{"name is derived", minimal + "roles:\n  r:\n    name: r\n    budget: {epsilon: 1}\n", 6, "name", "roles.r.name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src))
			if err == nil {
				t.Fatal("unknown key accepted")
			}
			msg := err.Error()
			for _, want := range []string{`unknown key "` + tc.key + `"`, "line " + strconv.Itoa(tc.line) + ":", tc.path} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q", msg, want)
				}
			}
			var le *lineError
			if !errors.As(err, &le) || le.Line != tc.line {
				t.Errorf("error %v is not a lineError on line %d", err, tc.line)
			}
		})
	}
}

func TestYAMLErrorsNameLine(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line      int
	}{
		{"wrong type", minimal + "limits:\n  max_connections: many\n", 5},
		{"bad duration", minimal + "limits:\n  query_timeout: soon\n", 5},
		{"bare number duration", minimal + "limits:\n  idle_timeout: 60\n", 5},
		{"duplicate key", minimal + "ledger: {path: a}\nledger: {path: b}\n", 5},
		{"syntax", minimal + "roles: [\n", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src))
			var le *lineError
			if !errors.As(err, &le) || le.Line != tc.line {
				t.Fatalf("err = %v, want an error on line %d", err, tc.line)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q spans several lines", err)
			}
		})
	}
}

func TestDurations(t *testing.T) {
	p, err := Parse([]byte(minimal + "limits:\n  query_timeout: 30s\n  idle_timeout: \"5m\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Limits.QueryTimeout.Duration != 30*time.Second || p.Limits.IdleTimeout.Duration != 5*time.Minute {
		t.Errorf("limits = %+v", p.Limits)
	}
}

func TestMultipleDocuments(t *testing.T) {
	if _, err := Parse([]byte(minimal + "---\n" + minimal)); err == nil {
		t.Fatal("two documents accepted")
	}
}

func TestDeltaDefaultOnlyWhenAbsent(t *testing.T) {
	p, err := Parse([]byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if p.Defaults.Delta != 1e-6 || p.Defaults.Epsilon != 1 || p.Defaults.Mechanism != "laplace" {
		t.Errorf("defaults = %+v", p.Defaults)
	}
	p, err = Parse([]byte(minimal + "defaults: {delta: 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Defaults.Delta != 0 {
		t.Errorf("explicit delta 0 became %v", p.Defaults.Delta)
	}
}
