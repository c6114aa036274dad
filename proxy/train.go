package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/eval"
	"github.com/dpproxy/dpproxy/ledger"
	"github.com/dpproxy/dpproxy/metrics"
	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/rewrite"
	"github.com/dpproxy/dpproxy/train"
)

// modelsNamespace is where trained models live in the ledger's store, so
// they survive restarts and are shared by a fleet on etcd.
const modelsNamespace = "models"

// storedModel is a released model with who trained it, when, and at what
// cost.
type storedModel struct {
	Name      string       `json:"name"`
	Model     *train.Model `json:"model"`
	Owner     string       `json:"owner"`
	Role      string       `json:"role"`
	TrainedAt time.Time    `json:"trained_at"`
	Statement string       `json:"statement"`
	ChargeID  string       `json:"charge_id"`
}

// defaultMaxTrainingBytes caps the memory of one training set (the
// policy's limits may lower it per call with WITH (max_bytes = ...)).
const defaultMaxTrainingBytes = train.DefaultMaxBytes

// trainModel answers TRAIN PRIVATE LOGREG: plan the rows, charge ε, stream
// the rows into a compact matrix, fit by objective (or output)
// perturbation, store and return the model. The charge is written before
// the backend is asked, like any answer; a backend failure refunds it.
func (s *Session) trainModel(ctx context.Context, sqlText string, st *parser.TrainModel) (*Result, error) {
	s.kind = metrics.KindTrain
	if _, ok, err := s.engine.ledger.Get(ctx, modelsNamespace, st.Name); err != nil {
		return nil, err
	} else if ok {
		return nil, Errorf(CodeBadValue, "model %s exists; DROP MODEL %s first", st.Name, st.Name)
	}
	ts, err := rewrite.Training(rewrite.Input{
		Select: st.Query, Policy: s.engine.policy, Schema: s.engine,
		Database: s.engine.database, Dialect: s.engine.backendDialect(),
	}, st.Label)
	if err != nil {
		return nil, err
	}
	features := make([]train.Feature, len(ts.Features))
	for i, name := range ts.Features {
		f, err := featureOf(ts.Table, name)
		if err != nil {
			return nil, err
		}
		features[i] = f
	}
	opts, maxBytes, err := s.trainOptions(ctx, st.Options)
	if err != nil {
		return nil, err
	}
	enc, err := train.NewEncoder(features)
	if err != nil {
		return nil, Errorf(CodeRefused, "dpproxy refused to train: %v", err)
	}
	var model *train.Model
	_, receipt, err := s.withCharge(ctx, ledger.Charge{
		User: s.user.Name, Role: s.role.Name, Statement: sqlText,
		Mechanism: "logreg-" + opts.Method, Epsilon: opts.Epsilon,
		// Pure ε-DP is ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4).
		Rho: opts.Epsilon * opts.Epsilon / 2,
	}, func(ctx context.Context, db querier) (*Result, error) {
		data, err := s.engine.trainingData(ctx, db, ts, enc, maxBytes)
		if err != nil {
			return nil, err
		}
		// The noise is drawn inside Fit: a failure there is an outcome too.
		model, err = train.Fit(ctx, data, opts)
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	stored := &storedModel{Name: st.Name, Model: model, Owner: s.user.Name, Role: s.role.Name,
		TrainedAt: receipt.Time, Statement: sqlText, ChargeID: receipt.ID}
	b, err := json.Marshal(stored)
	if err != nil {
		return nil, err
	}
	if err := s.engine.ledger.Put(ctx, modelsNamespace, st.Name, b); err != nil {
		return nil, err
	}
	return modelResult(stored), nil
}

// featureOf describes a feature column from PUBLIC information only: its
// policy bounds (numeric) or public values (categorical).
func featureOf(t *policy.Table, name string) (train.Feature, error) {
	col, _ := t.Column(name)
	switch {
	case col != nil && len(col.PublicValues) > 0 && !(col.Bounded() && col.Type != policy.TypeString):
		cats := make([]string, len(col.PublicValues))
		for i, v := range col.PublicValues {
			cats[i] = eval.ToString(v)
		}
		return train.Feature{Name: name, Categories: cats}, nil
	case col != nil && col.Type == policy.TypeDate:
		// Date bounds are days, the backend's values dates: a date is
		// not a number a model can weigh.
		return train.Feature{}, Errorf(CodeUnsupported, "unsupported SQL: date column %s of %s as a feature (list its public values to one-hot encode it)", name, t.Name)
	case col.Bounded():
		return train.Feature{Name: name, Numeric: true, Lower: *col.Lower, Upper: *col.Upper}, nil
	}
	return train.Feature{}, Errorf(CodeRefused,
		"dpproxy refused to train: column %s of %s has neither public bounds nor public values, so it cannot be scaled or one-hot encoded without looking at the data", name, t.Name)
}

// trainOptions reads WITH (...): epsilon (default: the session's), lambda
// (a positive number or 'auto'; default: set from the row count and ε, see
// package train), method ('objective' | 'output'), kernel = 'rbf'
// with components and gamma, max_bytes.
func (s *Session) trainOptions(ctx context.Context, o map[string]any) (train.Options, int64, error) {
	eps, _, _ := s.budget()
	opts := train.Options{Epsilon: eps, Method: train.MethodObjective}
	maxBytes := int64(defaultMaxTrainingBytes)
	num := func(k string, v any) (float64, error) {
		f, ok := v.(float64)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, Errorf(CodeBadValue, "%s must be a number, got %v", k, v)
		}
		return f, nil
	}
	var rff *train.RFFOptions
	for k, v := range o {
		var err error
		switch k {
		case "epsilon":
			opts.Epsilon, err = num(k, v)
		case "lambda":
			if str, ok := v.(string); ok && strings.EqualFold(str, "auto") {
				opts.AutoLambda = true
			} else if opts.Lambda, err = num(k, v); err == nil && !(opts.Lambda > 0) {
				err = Errorf(CodeBadValue, "lambda must be positive or 'auto', got %v", v)
			}
		case "method":
			m, _ := v.(string)
			if m != train.MethodObjective && m != train.MethodOutput {
				return opts, 0, Errorf(CodeBadValue, "method must be 'objective' or 'output', got %v", v)
			}
			opts.Method = m
		case "kernel":
			if str, _ := v.(string); str != "rbf" && str != "linear" {
				return opts, 0, Errorf(CodeBadValue, "kernel must be 'rbf' or 'linear', got %v", v)
			} else if str == "rbf" && rff == nil {
				rff = &train.RFFOptions{Components: 200, Gamma: 0.1}
			}
		case "components", "gamma":
			f, ferr := num(k, v)
			if ferr != nil {
				return opts, 0, ferr
			}
			if rff == nil {
				rff = &train.RFFOptions{Components: 200, Gamma: 0.1}
			}
			if k == "components" {
				rff.Components = int(f)
			} else {
				rff.Gamma = f
			}
		case "max_bytes":
			var f float64
			if f, err = num(k, v); err == nil && !(f >= 1) {
				err = Errorf(CodeBadValue, "max_bytes must be a positive number of bytes, got %v", v)
			}
			maxBytes = int64(f)
		default:
			return opts, 0, Errorf(CodeBadValue, "unknown option %s (epsilon, lambda, method, kernel, components, gamma, max_bytes)", k)
		}
		if err != nil {
			return opts, 0, err
		}
	}
	opts.Kernel = rff
	if !(opts.Epsilon > 0) {
		return opts, 0, Errorf(CodeBadValue, "epsilon must be positive")
	}
	lim, err := s.effectiveLimits(ctx)
	if err != nil {
		return opts, 0, err
	}
	if max := lim.MaxPerQuery.Epsilon; max > 0 && opts.Epsilon > max {
		return opts, 0, Errorf(CodeBadValue, "a query may spend at most ε=%g for role %s", max, s.role.Name)
	}
	return opts, maxBytes, nil
}

// trainingData streams the training rows from the backend into a compact
// matrix; memory is bounded by maxBytes.
func (e *Engine) trainingData(ctx context.Context, db querier, ts *rewrite.TrainingSet, enc *train.Encoder, maxBytes int64) (*train.Data, error) {
	rows, err := db.QueryContext(ctx, ts.SQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	n := len(ts.Features)
	raw := make([]any, n+1)
	ptrs := make([]any, n+1)
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	data := train.NewData(enc, maxBytes)
	values := make([]any, n)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i := 0; i < n; i++ {
			v := raw[i]
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			values[i] = v
		}
		label := toNumber(raw[n])
		if err := data.Add(values, label == 1); err != nil {
			return nil, err
		}
	}
	return data, rows.Err()
}

// modelColumns are the columns of a model's result: one row per feature.
var modelColumns = []Column{
	{Name: "feature", Type: TypeString},
	{Name: "weight", Type: TypeFloat},
	{Name: "model", Type: TypeString},
	{Name: "epsilon", Type: TypeFloat},
	{Name: "delta", Type: TypeFloat},
	{Name: "lambda", Type: TypeFloat},
	{Name: "method", Type: TypeString},
	{Name: "rows_used", Type: TypeInt},
	{Name: "trained_at", Type: TypeString},
	{Name: "trained_by", Type: TypeString},
}

// modelResult lists a model's weights on the original scale of each
// feature, with its metadata on every row.
func modelResult(m *storedModel) *Result {
	res := &Result{Columns: modelColumns}
	at := m.TrainedAt.UTC().Format("2006-01-02 15:04:05")
	for i, f := range m.Model.Features {
		res.Rows = append(res.Rows, []Value{f, m.Model.Weights[i], m.Name, m.Model.Epsilon, m.Model.Delta,
			m.Model.Lambda, m.Model.Method, m.Model.Rows, at, m.Owner})
	}
	return res
}

func (s *Session) loadModel(ctx context.Context, name string) (*storedModel, error) {
	b, ok, err := s.engine.ledger.Get(ctx, modelsNamespace, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, Errorf(CodeBadValue, "no model named %s", name)
	}
	var m storedModel
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("reading model %s: %w", name, err)
	}
	return &m, nil
}

// showModel lists one model's weights. Models are released answers: anyone
// may read them.
func (s *Session) showModel(ctx context.Context, st *parser.ShowModel) (*Result, error) {
	m, err := s.loadModel(ctx, st.Name)
	if err != nil {
		return nil, err
	}
	return modelResult(m), nil
}

var modelsColumns = []Column{
	{Name: "model", Type: TypeString},
	{Name: "kind", Type: TypeString},
	{Name: "features", Type: TypeInt},
	{Name: "epsilon", Type: TypeFloat},
	{Name: "lambda", Type: TypeFloat},
	{Name: "method", Type: TypeString},
	{Name: "rows_used", Type: TypeInt},
	{Name: "trained_at", Type: TypeString},
	{Name: "trained_by", Type: TypeString},
}

func (s *Session) showModels(ctx context.Context) (*Result, error) {
	all, err := s.engine.ledger.List(ctx, modelsNamespace)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	res := &Result{Columns: modelsColumns}
	for _, n := range names {
		var m storedModel
		if err := json.Unmarshal(all[n], &m); err != nil {
			return nil, fmt.Errorf("reading model %s: %w", n, err)
		}
		kind := "logreg"
		if m.Model.RFF != nil {
			kind = "logreg-rbf"
		}
		res.Rows = append(res.Rows, []Value{n, kind, int64(len(m.Model.Inputs)), m.Model.Epsilon, m.Model.Lambda,
			m.Model.Method, m.Model.Rows, m.TrainedAt.UTC().Format("2006-01-02 15:04:05"), m.Owner})
	}
	return res, nil
}

// dropModel deletes a model: its owner or an admin may.
func (s *Session) dropModel(ctx context.Context, st *parser.DropModel) (*Result, error) {
	m, err := s.loadModel(ctx, st.Name)
	if err != nil {
		return nil, err
	}
	if m.Owner != s.user.Name && !s.role.Admin {
		return nil, Errorf(CodePermission, "model %s belongs to %s; only they or an admin may drop it", st.Name, m.Owner)
	}
	if err := s.engine.ledger.Delete(ctx, modelsNamespace, st.Name); err != nil {
		return nil, err
	}
	return &Result{Info: "DROP MODEL"}, nil
}
