package integration

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/policy"
)

// The sample data sets have no dates, so the tests add a fixture table of
// hospital-style visits with two date columns, generated deterministically
// for the persons of pums_person (pid 1..1000): 1 to 3 visits each, admitted
// between 2015 and 2024, staying 0 to 19 days. It exercises date
// differences and date parts in every backend.
const visitsPersons = 1000

// visitsTable adds the fixture's policy: the same people as pums, at most 3
// rows and 3 groups each.
func visitsTable(pol *policy.Policy) {
	pol.Tables["visits"] = &policy.Table{
		Name:             "visits",
		PrivacyUnit:      "pid",
		UnitName:         "person",
		MaxRowsPerUnit:   3,
		MaxGroupsPerUnit: 3,
		Columns: map[string]*policy.Column{
			"admitted":   {Type: policy.TypeDate, LowerValue: "2015-01-01", UpperValue: "2024-12-31"},
			"discharged": {Type: policy.TypeDate, LowerValue: "2015-01-01", UpperValue: "2025-12-31"},
			"cost":       {Type: policy.TypeFloat, LowerValue: 0.0, UpperValue: 5000.0},
		},
	}
}

// createVisits (re)creates the fixture table in a backend.
func createVisits(ctx context.Context, db *sql.DB, driver string) error {
	dateType, floatType := "DATE", "DOUBLE PRECISION"
	switch driver {
	case "sqlite":
		dateType, floatType = "TEXT", "REAL"
	case "mysql":
		floatType = "DOUBLE"
	}
	stmts := []string{
		"DROP TABLE IF EXISTS visits",
		fmt.Sprintf("CREATE TABLE visits (pid INTEGER, admitted %s, discharged %s, cost %s)", dateType, dateType, floatType),
	}
	start := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)
	var rows []string
	for pid := 1; pid <= visitsPersons; pid++ {
		for k := 0; k < 1+pid%3; k++ {
			in := start.AddDate(0, 0, (pid*37+k*101)%3650)
			stay := (pid + k*7) % 20
			out := in.AddDate(0, 0, stay)
			rows = append(rows, fmt.Sprintf("(%d, '%s', '%s', %d)", pid, in.Format(time.DateOnly), out.Format(time.DateOnly), 100*stay+pid%50))
		}
	}
	stmts = append(stmts, "INSERT INTO visits VALUES "+strings.Join(rows, ", "))
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("visits fixture: %w", err)
		}
	}
	return nil
}
