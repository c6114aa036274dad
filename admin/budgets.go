package admin

import (
	"cmp"
	"math"
	"slices"
	"strconv"
)

// A bar turns amber once more than warnAt of a budget is spent and red once
// more than alertAt is: late enough not to cry wolf, early enough that a DBA
// can raise a budget before analysts are refused.
const (
	warnAt  = 0.75
	alertAt = 0.90
)

// Bar levels, used as CSS classes.
const (
	levelOK    = "ok"
	levelWarn  = "warn"
	levelAlert = "alert"
)

// budgetView is one table row as the template shows it; every field is
// ready to print.
type budgetView struct {
	Kind      string
	Name      string
	Role      string
	Member    bool    // a user listed under their role's row
	Fraction  float64 // ε spent / ε total, clamped to [0, 1]
	BarWidth  string  // Fraction in the bar's 0–100 viewBox units
	Level     string  // levelOK, levelWarn or levelAlert
	Limited   bool    // false when ε total is unlimited
	Percent   string
	EpsSpent  string
	EpsTotal  string
	DeltaText string
}

// budgetViews orders rows by role, each role's own row first and then its
// users by name, and formats them for the page.
func budgetViews(rows []BudgetRow) []budgetView {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b BudgetRow) int {
		return cmp.Or(
			cmp.Compare(group(a), group(b)),
			cmp.Compare(kindOrder(a.Kind), kindOrder(b.Kind)),
			cmp.Compare(a.Name, b.Name),
		)
	})
	roles := make(map[string]bool)
	for _, r := range rows {
		if r.Kind == KindRole {
			roles[r.Name] = true
		}
	}
	out := make([]budgetView, 0, len(rows))
	for _, r := range rows {
		frac, limited := fraction(r.EpsilonSpent, r.EpsilonTotal)
		v := budgetView{
			Kind:      r.Kind,
			Name:      r.Name,
			Role:      r.Role,
			Member:    r.Kind == KindUser && roles[r.Role],
			Fraction:  frac,
			BarWidth:  strconv.FormatFloat(100*frac, 'f', 2, 64),
			Level:     level(frac),
			Limited:   limited,
			EpsSpent:  formatEpsilon(r.EpsilonSpent),
			EpsTotal:  formatEpsilon(r.EpsilonTotal),
			DeltaText: formatDelta(r.DeltaSpent) + " / " + formatDelta(r.DeltaTotal),
		}
		if limited {
			v.Percent = strconv.FormatFloat(100*frac, 'f', 0, 64) + "%"
		}
		out = append(out, v)
	}
	return out
}

// group is the role a row is listed under.
func group(r BudgetRow) string {
	if r.Kind == KindRole {
		return r.Name
	}
	return r.Role
}

func kindOrder(kind string) int {
	if kind == KindRole {
		return 0
	}
	return 1
}

// fraction is spent/total clamped to [0, 1]; limited is false for an
// unlimited (infinite or NaN) total. A zero total with nothing spent is an
// empty bar; a zero total with anything spent is a full one.
func fraction(spent, total float64) (frac float64, limited bool) {
	if math.IsInf(total, 1) || math.IsNaN(total) {
		return 0, false
	}
	switch {
	case math.IsNaN(spent) || spent <= 0:
		return 0, true
	case total <= 0:
		return 1, true
	}
	return min(1, spent/total), true
}

func level(frac float64) string {
	switch {
	case frac > alertAt:
		return levelAlert
	case frac > warnAt:
		return levelWarn
	}
	return levelOK
}

// formatEpsilon prints ε with four significant digits and no exponent in
// the range DBAs set budgets in, so that columns of numbers line up.
func formatEpsilon(x float64) string {
	switch {
	case math.IsInf(x, 1) || math.IsNaN(x):
		return "∞"
	case x == 0:
		return "0"
	case math.Abs(x) < 1e-3 || math.Abs(x) >= 1e6:
		return strconv.FormatFloat(x, 'g', 3, 64)
	}
	rounded, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 4, 64), 64)
	return strconv.FormatFloat(rounded, 'f', -1, 64)
}

// formatDelta prints δ, which is usually tiny, in scientific notation.
func formatDelta(x float64) string {
	switch {
	case math.IsInf(x, 1) || math.IsNaN(x):
		return "∞"
	case x == 0:
		return "0"
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}
