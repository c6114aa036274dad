package admin

import (
	"context"
	"errors"
	"math"
	"time"
)

// fakeSource is a Source with fixed rows and charges, for handler tests.
type fakeSource struct {
	rows   []BudgetRow
	points []SpendPoint
	err    error
	since  time.Time // the last Spending call's argument
}

func (f *fakeSource) Budgets(ctx context.Context) ([]BudgetRow, error) {
	if f.err != nil {
		return nil, f.err
	}
	return f.rows, ctx.Err()
}

func (f *fakeSource) Spending(ctx context.Context, since time.Time) ([]SpendPoint, error) {
	f.since = since
	if f.err != nil {
		return nil, f.err
	}
	var out []SpendPoint
	for _, p := range f.points {
		if !p.Time.Before(since) {
			out = append(out, p)
		}
	}
	return out, ctx.Err()
}

// fixedNow is the clock of every page test: a Friday afternoon in UTC.
var fixedNow = time.Date(2025, 3, 14, 15, 7, 0, 0, time.UTC)

// hostileName is a user name full of HTML, to prove the page escapes it.
const hostileName = `bob<script>alert("x")</script>&co`

// sampleRows: two roles and their users at distinct levels of spending.
// Sorted as the page shows them, the bars are: analyst 40% (ok), alice
// 50% (ok), bob 95% (alert), auditors 80% (warn), carol unlimited (no bar),
// dave 0% (empty bar).
func sampleRows() []BudgetRow {
	return []BudgetRow{
		{Kind: KindUser, Name: "dave", Role: "auditors", EpsilonSpent: 0, EpsilonTotal: 4, DeltaSpent: 0, DeltaTotal: 1e-6},
		{Kind: KindUser, Name: hostileName, Role: "analyst", EpsilonSpent: 9.5, EpsilonTotal: 10, DeltaSpent: 4e-6, DeltaTotal: 1e-5},
		{Kind: KindRole, Name: "auditors", EpsilonSpent: 8, EpsilonTotal: 10, DeltaSpent: 0, DeltaTotal: 1e-6},
		{Kind: KindUser, Name: "alice", Role: "analyst", EpsilonSpent: 2.5, EpsilonTotal: 5, DeltaSpent: 1e-6, DeltaTotal: 1e-5},
		{Kind: KindRole, Name: "analyst", EpsilonSpent: 12, EpsilonTotal: 30, DeltaSpent: 5e-6, DeltaTotal: 1e-5},
		{Kind: KindUser, Name: "carol", Role: "auditors", EpsilonSpent: 1.25, EpsilonTotal: math.Inf(1), DeltaSpent: 0, DeltaTotal: math.Inf(1)},
	}
}

// samplePoints: a day of charges for both roles, spread deterministically.
// analyst: 24 charges of 0.5 (12 in all); auditors: 8 charges of 1 in the
// last 10 hours.
func samplePoints(now time.Time) []SpendPoint {
	var ps []SpendPoint
	for i := range 24 {
		at := now.Add(-24*time.Hour + time.Duration(i)*time.Hour + time.Duration(i*i%7)*7*time.Minute)
		ps = append(ps, SpendPoint{Time: at, Role: "analyst", Epsilon: 0.5})
	}
	for i := range 8 {
		at := now.Add(-10*time.Hour + time.Duration(i*i+3*i)*8*time.Minute)
		ps = append(ps, SpendPoint{Time: at, Role: "auditors", Epsilon: 1})
	}
	// Outside the default 24 h window: must not count there.
	ps = append(ps, SpendPoint{Time: now.Add(-48 * time.Hour), Role: "analyst", Epsilon: 100})
	return ps
}

func sampleSource() *fakeSource {
	return &fakeSource{rows: sampleRows(), points: samplePoints(fixedNow)}
}

var errLedgerDown = errors.New("ledger: database is closed")
