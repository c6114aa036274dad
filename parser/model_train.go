package parser

// TrainModel is TRAIN PRIVATE LOGREG name ON (select) LABEL expr
// [WITH (key = value, ...)]: train a private classifier on the rows the
// select returns, with the label a boolean expression over its columns.
type TrainModel struct {
	Name    string
	Kind    string // "logreg"
	Query   *Select
	Label   Expr
	Options map[string]any // lower-case keys; values float64 or string
}

// EvaluateModel is EVALUATE MODEL name ON (select) LABEL expr: the model's
// accuracy, precision and recall on private rows, released as DP counts.
type EvaluateModel struct {
	Name  string
	Query *Select
	Label Expr
	// Options are WITH (epsilon = ...); may be empty.
	Options map[string]any
}

// ShowModels is SHOW MODELS; ShowModel is SHOW MODEL name; DropModel is
// DROP MODEL name.
type ShowModels struct{}
type ShowModel struct{ Name string }
type DropModel struct{ Name string }

func (*TrainModel) statement()    {}
func (*EvaluateModel) statement() {}
func (*ShowModels) statement()    {}
func (*ShowModel) statement()     {}
func (*DropModel) statement()     {}
