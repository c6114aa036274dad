package proxy

import (
	"context"
	"maps"
	"math"
	"strings"

	"github.com/dpproxy/dpproxy/eval"
	"github.com/dpproxy/dpproxy/ledger"
	"github.com/dpproxy/dpproxy/parser"
)

// settings are a session's DP parameters; zero values mean "the policy's
// default".
type settings struct {
	epsilon   float64
	delta     float64
	deltaSet  bool
	mechanism string
	// confidence, when set, adds <col>_ci_low/_ci_high columns.
	confidence float64
	// noCache turns off serving repeats from released answers (dp_cache).
	noCache bool
}

// budget returns the (ε, δ, mechanism) a query of this session spends.
func (s *Session) budget() (eps, delta float64, mech string) {
	d := s.engine.policy.Defaults
	eps, delta, mech = d.Epsilon, d.Delta, d.Mechanism
	if s.settings.epsilon > 0 {
		eps = s.settings.epsilon
	}
	if s.settings.deltaSet {
		delta = s.settings.delta
	}
	if s.settings.mechanism != "" {
		mech = s.settings.mechanism
	}
	return eps, delta, mech
}

// variable answers a session variable for the catalog and SELECT @@x.
func (s *Session) variable(name string) (any, bool) {
	eps, delta, mech := s.budget()
	switch strings.ToLower(name) {
	case "dp_epsilon":
		return eps, true
	case "dp_delta":
		return delta, true
	case "dp_mechanism":
		return mech, true
	case "dp_confidence":
		return s.settings.confidence, true
	case "dp_cache":
		return map[bool]string{false: "on", true: "off"}[s.settings.noCache], true
	}
	v, ok := s.vars[strings.ToLower(name)]
	return v, ok
}

// Caps on what SET may store: session and user variables live in the
// proxy's memory for the life of a connection.
const (
	maxSessionVariables = 256      // per map: session (@@x) and user (@x) variables
	maxVariableBytes    = 64 << 10 // one variable's value
)

// set handles SET. dpproxy's own variables are checked against the role's
// limits; other session variables are remembered for SELECT @@x and never
// reach the backend, so no SET can change what the backend session reads.
// A SET of several assignments is atomic: every value is evaluated and
// checked first, and nothing changes unless all pass.
func (s *Session) set(ctx context.Context, st *parser.Set, args []Value) (*Result, error) {
	lim, err := s.effectiveLimits(ctx)
	if err != nil {
		return nil, err
	}
	next := s.settings
	vars := map[string]any{}
	userVars := map[string]any{}
	for _, a := range st.Assignments {
		v, err := eval.Eval(a.Value, s.env(args))
		if err != nil {
			return nil, err
		}
		if a.Scope == parser.ScopeGlobal {
			return nil, Errorf(CodePermission, "SET GLOBAL %s is not allowed through dpproxy", a.Name)
		}
		if str, ok := v.(string); ok && len(str) > maxVariableBytes {
			return nil, Errorf(CodeBadValue, "the value of %s is %d bytes, more than the %d a variable may hold", a.Name, len(str), maxVariableBytes)
		}
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return nil, Errorf(CodeBadValue, "the value of %s is not a finite number", a.Name)
		}
		if a.Scope == parser.ScopeUser {
			userVars[a.Name] = v
			continue
		}
		if err := s.setDP(&next, lim, a.Name, v); err != nil {
			return nil, err
		} else if !isDPVariable(a.Name) {
			vars[a.Name] = v
		}
	}
	if grows(s.vars, vars) > maxSessionVariables || grows(s.userVars, userVars) > maxSessionVariables {
		return nil, Errorf(CodeBadValue, "a session may hold at most %d variables of each kind", maxSessionVariables)
	}
	s.settings = next
	maps.Copy(s.vars, vars)
	maps.Copy(s.userVars, userVars)
	return &Result{}, nil
}

// grows is how many variables m would hold with add set.
func grows(m, add map[string]any) int {
	n := len(m)
	for k := range add {
		if _, ok := m[k]; !ok {
			n++
		}
	}
	return n
}

func isDPVariable(name string) bool {
	switch name {
	case "dp_epsilon", "dp_delta", "dp_confidence", "dp_cache", "dp_mechanism":
		return true
	}
	return false
}

// setDP checks and applies one of dpproxy's own variables to next; other
// names are left alone.
func (s *Session) setDP(next *settings, lim ledger.Limits, name string, v any) error {
	switch name {
	case "dp_epsilon":
		f, ok := eval.ToFloat(v)
		if !ok || !(f > 0) || math.IsInf(f, 0) {
			return Errorf(CodeBadValue, "dp_epsilon must be a positive number, got %v", v)
		}
		if max := lim.MaxPerQuery.Epsilon; max > 0 && f > max {
			return Errorf(CodeBadValue, "dp_epsilon %g is over the most role %s may spend on one query (%g)", f, s.role.Name, max)
		}
		if f > lim.User.Epsilon {
			return Errorf(CodeBadValue, "dp_epsilon %g is over your whole budget (ε=%g)", f, lim.User.Epsilon)
		}
		if err := s.checkEpsilonFloor(f); err != nil {
			return err
		}
		next.epsilon = f
	case "dp_delta":
		f, ok := eval.ToFloat(v)
		if !ok || !(f >= 0 && f < 1) {
			return Errorf(CodeBadValue, "dp_delta must be in [0, 1), got %v", v)
		}
		if max := lim.MaxPerQuery.Delta; max > 0 && f > max {
			return Errorf(CodeBadValue, "dp_delta %g is over the most role %s may spend on one query (%g)", f, s.role.Name, max)
		}
		if f > lim.User.Delta {
			return Errorf(CodeBadValue, "dp_delta %g is over your whole budget (δ=%g)", f, lim.User.Delta)
		}
		next.delta, next.deltaSet = f, true
	case "dp_confidence":
		f, ok := eval.ToFloat(v)
		if str, isStr := v.(string); isStr && strings.EqualFold(str, "off") {
			f, ok = 0, true
		}
		if !ok || !(f >= 0 && f < 1) {
			return Errorf(CodeBadValue, "dp_confidence must be in (0, 1), or 0 / 'off', got %v", v)
		}
		next.confidence = f
	case "dp_cache":
		switch strings.ToLower(eval.ToString(v)) {
		case "on", "1", "true":
			next.noCache = false
		case "off", "0", "false":
			next.noCache = true
		default:
			return Errorf(CodeBadValue, "dp_cache must be 'on' or 'off', got %v", v)
		}
	case "dp_mechanism":
		m := strings.ToLower(eval.ToString(v))
		if m != "laplace" && m != "gaussian" {
			return Errorf(CodeBadValue, "dp_mechanism must be 'laplace' or 'gaussian', got '%s'", eval.ToString(v))
		}
		next.mechanism = m
	}
	return nil
}

// resetVar returns one session variable to its default.
func (s *Session) resetVar(name string) {
	switch strings.ToLower(name) {
	case "dp_epsilon":
		s.settings.epsilon = 0
	case "dp_delta":
		s.settings.delta, s.settings.deltaSet = 0, false
	case "dp_mechanism":
		s.settings.mechanism = ""
	case "dp_confidence":
		s.settings.confidence = 0
	case "dp_cache":
		s.settings.noCache = false
	default:
		delete(s.vars, strings.ToLower(name))
	}
}
