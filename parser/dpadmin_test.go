package parser

import (
	"reflect"
	"strings"
	"testing"
)

func f64(f float64) *float64 { return &f }

func TestAdminStatements(t *testing.T) {
	cases := []struct {
		sql  string
		want Statement
	}{
		{"SET PRIVACY BUDGET FOR ROLE analyst EPSILON 10 DELTA 1e-5",
			&SetPrivacyBudget{Role: "analyst", Epsilon: f64(10), Delta: f64(1e-5)}},
		{"SET PRIVACY BUDGET FOR ROLE analyst MAX EPSILON PER QUERY 1;",
			&SetPrivacyBudget{Role: "analyst", MaxEpsilonPerQuery: f64(1)}},
		{"set privacy budget for role analyst pool epsilon 30",
			&SetPrivacyBudget{Role: "analyst", PoolEpsilon: f64(30)}},
		{"SET PRIVACY BUDGET FOR ROLE analyst POOL EPSILON 30 DELTA 1.0E-4 MAX DELTA PER QUERY 1e-6",
			&SetPrivacyBudget{Role: "analyst", PoolEpsilon: f64(30), PoolDelta: f64(1e-4), MaxDeltaPerQuery: f64(1e-6)}},
		{"SET PRIVACY BUDGET FOR USER alice EPSILON 5", &SetPrivacyBudget{User: "alice", Epsilon: f64(5)}},
		{"SET PRIVACY BUDGET FOR USER `bob smith` EPSILON .5", &SetPrivacyBudget{User: "bob smith", Epsilon: f64(0.5)}},
		{"RESET PRIVACY BUDGET FOR USER alice;", &ResetPrivacyBudget{User: "alice"}},
		{"SHOW PRIVACY LEDGER", &ShowPrivacyLedger{}},
		{"SHOW PRIVACY LEDGER FOR USER alice LIMIT 100", &ShowPrivacyLedger{User: "alice", Limit: 100}},
		{"SHOW PRIVACY LEDGER LIMIT 5", &ShowPrivacyLedger{Limit: 5}},
	}
	for _, tc := range cases {
		got, _, err := Parse(tc.sql, MySQL)
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", tc.sql, got, tc.want)
		}
	}
}

func TestAdminStatementErrors(t *testing.T) {
	cases := map[string]string{
		"SET PRIVACY BUDGET FOR ROLE analyst":                   "needs EPSILON",
		"SET PRIVACY BUDGET FOR GROUP x EPSILON 1":              "expected USER or ROLE",
		"SET PRIVACY BUDGET FOR ROLE a EPSILON ten":             "expected a number",
		"SET PRIVACY BUDGET FOR ROLE a EPSILON 1 EPSILON 2":     "given twice",
		"SET PRIVACY BUDGET FOR USER a MAX EPSILON PER QUERY 1": "for roles",
		"SET PRIVACY BUDGET FOR ROLE a MAX EPSILON PER 1":       "expected QUERY",
		"RESET PRIVACY BUDGET FOR ROLE analyst":                 "FOR USER",
		"SHOW PRIVACY LEDGER LIMIT 0":                           "LIMIT",
		"SHOW PRIVACY LEDGER FOR USER alice LIMIT 10 extra":     "end of statement",
	}
	for sql, want := range cases {
		_, _, err := Parse(sql, MySQL)
		if _, ok := err.(*SyntaxError); !ok || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want a syntax error mentioning %q", sql, err, want)
		}
	}
}

func TestExplainPrivacy(t *testing.T) {
	stmt, n, err := Parse("EXPLAIN PRIVACY SELECT sex, COUNT(*) FROM adult WHERE age > ? GROUP BY sex", MySQL)
	if err != nil {
		t.Fatal(err)
	}
	ex, ok := stmt.(*ExplainPrivacy)
	if !ok || ex.Params != 1 || n != 0 {
		t.Fatalf("got %#v, %d", stmt, n)
	}
	if sel, ok := ex.Select.(*Select); !ok || len(sel.GroupBy) != 1 {
		t.Errorf("embedded select: %#v", ex.Select)
	}
	for sql, want := range map[string]string{
		"EXPLAIN PRIVACY":             "needs a SELECT",
		"EXPLAIN PRIVACY SHOW TABLES": "anything but a SELECT",
		"EXPLAIN PRIVACY SELEC 1":     "syntax",
	} {
		if _, _, err := Parse(sql, MySQL); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error mentioning %q", sql, err, want)
		}
	}
}

func TestTrainStatements(t *testing.T) {
	stmt, _, err := Parse(`TRAIN PRIVATE LOGREG income_model
  ON (SELECT age, education_num, hours_per_week, sex, occupation, income FROM adult
      WHERE age >= 18)
  LABEL income = '>50K'
  WITH (epsilon = 1.0, lambda = 0.0001, method = 'objective');`, MySQL)
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := stmt.(*TrainModel)
	if !ok || tr.Name != "income_model" || len(tr.Query.Items) != 6 || tr.Query.Where == nil {
		t.Fatalf("got %#v", stmt)
	}
	if b, ok := tr.Label.(*Binary); !ok || b.Op != OpEQ {
		t.Errorf("label %#v", tr.Label)
	}
	if tr.Options["epsilon"] != 1.0 || tr.Options["lambda"] != 0.0001 || tr.Options["method"] != "objective" {
		t.Errorf("options %v", tr.Options)
	}
	stmt, _, err = Parse("train private logreg m on (select a, b from t) label (b > 1) and a = ')'", MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if tr := stmt.(*TrainModel); len(tr.Options) != 0 || tr.Label.(*Binary).Op != OpAnd {
		t.Errorf("label without WITH: %#v", tr.Label)
	}
	for sql, want := range map[string]Statement{
		"SHOW MODELS":             &ShowModels{},
		"SHOW MODEL Income_Model": &ShowModel{Name: "income_model"},
		"DROP MODEL m;":           &DropModel{Name: "m"},
	} {
		got, _, err := Parse(sql, MySQL)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %#v %v", sql, got, err)
		}
	}
	stmt, _, err = Parse("EVALUATE MODEL m ON (SELECT a, y FROM t) LABEL y = 1 WITH (epsilon = 0.5)", MySQL)
	if ev, ok := stmt.(*EvaluateModel); err != nil || !ok || ev.Options["epsilon"] != 0.5 {
		t.Errorf("EVALUATE: %#v %v", stmt, err)
	}
	// A negative value parses, so that the option's own check can refuse it.
	stmt, _, err = Parse("TRAIN PRIVATE LOGREG m ON (SELECT a FROM t) LABEL a WITH (lambda = -0.5)", MySQL)
	if tr, ok := stmt.(*TrainModel); err != nil || !ok || tr.Options["lambda"] != -0.5 {
		t.Errorf("negative option: %#v %v", stmt, err)
	}
	for sql, want := range map[string]string{
		"TRAIN PRIVATE LOGREG m ON SELECT 1 LABEL x":                              "expected (",
		"TRAIN PRIVATE LOGREG m ON (SELECT a FROM t LABEL x":                      "unbalanced",
		"TRAIN PRIVATE LOGREG m ON (SELECT a FROM t) LABEL":                       "boolean expression",
		"TRAIN PRIVATE LOGREG m ON (SELECT a FROM t) LABEL a WITH (x = 1, x = 2)": "twice",
		"TRAIN PRIVATE LOGREG m ON (SELECT a FROM t) LABEL a WITH (x = -'a')":     "number after -",
	} {
		if _, _, err := Parse(sql, MySQL); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", sql, err, want)
		}
	}
}
