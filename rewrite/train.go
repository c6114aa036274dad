package rewrite

import (
	"math"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
)

// TrainingSet is the backend query that feeds a private model: the feature
// columns and the label of every row the analyst's SELECT keeps, at most one
// row per privacy unit (the add/remove guarantee of package train assumes
// each unit contributes one row).
type TrainingSet struct {
	Table    *policy.Table
	Features []string // feature columns, lower case, in order
	SQL      string   // returns the features, then the label as 0/1
}

// Training plans the rows of TRAIN PRIVATE / EVALUATE MODEL: the query must
// select plain columns of one private table (filtered by any WHERE); the
// columns the label reads are not features.
func Training(in Input, label parser.Expr) (*TrainingSet, error) {
	sel := in.Select
	tn, ok := sel.From.(*parser.TableName)
	if !ok {
		return nil, unsupported("training on joins or derived tables (select columns of one table)")
	}
	a, err := tableAnalysis(in, tn)
	if err != nil {
		return nil, err
	}
	table := a.table
	if sel.Distinct || len(sel.GroupBy) > 0 || sel.Having != nil || sel.Limit != nil || sel.ForUpdate {
		return nil, unsupported("DISTINCT, GROUP BY, HAVING, LIMIT or FOR UPDATE in a training query")
	}
	if sel.Where != nil {
		if err := a.rowLevel(sel.Where, "WHERE"); err != nil {
			return nil, err
		}
	}
	if err := a.rowLevel(label, "LABEL"); err != nil {
		return nil, err
	}
	labelCols := map[string]bool{}
	walk(label, func(n parser.Expr) bool {
		if ref, ok := n.(*parser.ColumnRef); ok {
			name, _ := a.column(ref)
			labelCols[name] = true
			return false
		}
		return true
	})
	ts := &TrainingSet{Table: table}
	for _, it := range sel.Items {
		ref, ok := it.Expr.(*parser.ColumnRef)
		if it.Star || !ok {
			return nil, unsupported("the training query selects columns only (features and the label's columns)")
		}
		name, err := a.column(ref)
		if err != nil {
			return nil, err
		}
		if name == strings.ToLower(table.PrivacyUnit) {
			return nil, refuse("the privacy unit %s cannot be a feature", name)
		}
		if !labelCols[name] {
			ts.Features = append(ts.Features, name)
		}
	}
	if len(ts.Features) == 0 {
		return nil, unsupported("the training query selects no feature (every column is used by the label)")
	}
	r := a.sqlRenderer()
	where, err := a.whereSQL(r)
	if err != nil {
		return nil, err
	}
	lab, err := r.expr(label)
	if err != nil {
		return nil, err
	}
	items := make([]string, 0, len(ts.Features)+1)
	for _, f := range ts.Features {
		items = append(items, r.ident(f))
	}
	// A NULL label is a negative example, as a false one.
	items = append(items, "CASE WHEN "+lab+" THEN 1 ELSE 0 END AS dp_label")
	if table.UnitIsRow() {
		ts.SQL = "SELECT " + strings.Join(items, ", ") + " FROM " + r.ident(table.Name) + where
		return ts, nil
	}
	unit := r.ident(strings.ToLower(table.PrivacyUnit))
	inner := append(items, "ROW_NUMBER() OVER (PARTITION BY "+unit+" ORDER BY "+r.random()+") AS dp_row_rank")
	outer := make([]string, len(ts.Features)+1)
	for i := range ts.Features {
		outer[i] = "dp_rows." + r.ident(ts.Features[i])
	}
	outer[len(ts.Features)] = "dp_label"
	ts.SQL = "SELECT " + strings.Join(outer, ", ") + " FROM (SELECT " + strings.Join(inner, ", ") + " FROM " +
		r.ident(table.Name) + where + ") dp_rows WHERE dp_row_rank <= " + strconv.Itoa(1)
	return ts, nil
}

// NumericTerm and CategoryTerm are the terms of a linear model's score on
// the original scale of its features (see train.Model.Weights).
type NumericTerm struct {
	Column       string
	Weight       float64
	Lower, Upper float64
}

type CategoryTerm struct {
	Column string
	Value  string
	Weight float64
}

// EvaluationSQL counts the confusion matrix of a linear model over a
// training set's rows: one row per (predicted, actual) cell with its count.
// The score is the model applied in the backend exactly as a user would:
// numeric values clamped to their public bounds (NULL: the midpoint), each
// categorical value adding the weight of "column=value".
func EvaluationSQL(ts *TrainingSet, d parser.Dialect, intercept float64, nums []NumericTerm, cats []CategoryTerm) string {
	r := &renderer{dialect: d}
	scale := scoreScale(intercept, nums, cats)
	w := func(x float64) string { return number(finiteOrZero(x) * scale) }
	terms := []string{w(intercept)}
	for _, t := range nums {
		mid := number((t.Lower + t.Upper) / 2)
		x := "COALESCE(" + r.ident(t.Column) + ", " + mid + ")"
		terms = append(terms, "("+w(t.Weight)+" * "+r.clamp(x, t.Lower, t.Upper)+")")
	}
	for _, t := range cats {
		terms = append(terms, "(CASE WHEN "+r.ident(t.Column)+" = "+r.bind(t.Value)+" THEN "+w(t.Weight)+" ELSE 0 END)")
	}
	score := strings.Join(terms, " + ")
	return "SELECT CASE WHEN " + score + " > 0 THEN 1 ELSE 0 END, dp_label, COUNT(*) FROM (" + ts.SQL + ") dp_eval GROUP BY 1, 2"
}

// scoreScale is a positive factor for every weight of a model that keeps
// the score's public bound, |b| + Σ|wᵢ|·max(|loᵢ|, |hiᵢ|) + Σ|w_c|, within
// maxBound, so that no backend's arithmetic on it can overflow (total.go).
// Scaling all weights by one positive factor keeps the sign of the score,
// which is all the prediction reads.
func scoreScale(intercept float64, nums []NumericTerm, cats []CategoryTerm) float64 {
	bound := math.Abs(finiteOrZero(intercept))
	for _, t := range nums {
		bound += math.Abs(finiteOrZero(t.Weight)) * math.Max(math.Abs(t.Lower), math.Abs(t.Upper))
	}
	for _, t := range cats {
		bound += math.Abs(finiteOrZero(t.Weight))
	}
	if bound <= maxBound || math.IsInf(bound, 0) {
		if math.IsInf(bound, 0) {
			return 0 // cannot happen for finite weights and bounds
		}
		return 1
	}
	return maxBound / bound
}

// finiteOrZero keeps NaN and ±Inf, which a renderer would write as bare
// identifiers, out of the SQL (train never produces them).
func finiteOrZero(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}
