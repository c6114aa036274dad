package proxy

import (
	"context"
	"math"
	"strings"

	"github.com/dpproxy/dpproxy/eval"
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

// set handles SET. dpproxy's own variables are checked against the role's
// limits; other session variables are remembered for SELECT @@x and never
// reach the backend, so no SET can change what the backend session reads.
func (s *Session) set(ctx context.Context, st *parser.Set, args []Value) (*Result, error) {
	lim, err := s.effectiveLimits(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range st.Assignments {
		v, err := eval.Eval(a.Value, s.env(args))
		if err != nil {
			return nil, err
		}
		if a.Scope == parser.ScopeGlobal {
			return nil, Errorf(CodePermission, "SET GLOBAL %s is not allowed through dpproxy", a.Name)
		}
		if a.Scope == parser.ScopeUser {
			s.userVars[a.Name] = v
			continue
		}
		switch a.Name {
		case "dp_epsilon":
			f, ok := eval.ToFloat(v)
			if !ok || !(f > 0) || math.IsInf(f, 0) {
				return nil, Errorf(CodeBadValue, "dp_epsilon must be a positive number, got %v", v)
			}
			if max := lim.MaxPerQuery.Epsilon; max > 0 && f > max {
				return nil, Errorf(CodeBadValue, "dp_epsilon %g is over the most role %s may spend on one query (%g)", f, s.role.Name, max)
			}
			if f > lim.User.Epsilon {
				return nil, Errorf(CodeBadValue, "dp_epsilon %g is over your whole budget (ε=%g)", f, lim.User.Epsilon)
			}
			s.settings.epsilon = f
		case "dp_delta":
			f, ok := eval.ToFloat(v)
			if !ok || f < 0 || f >= 1 {
				return nil, Errorf(CodeBadValue, "dp_delta must be in [0, 1), got %v", v)
			}
			if max := lim.MaxPerQuery.Delta; max > 0 && f > max {
				return nil, Errorf(CodeBadValue, "dp_delta %g is over the most role %s may spend on one query (%g)", f, s.role.Name, max)
			}
			if f > lim.User.Delta {
				return nil, Errorf(CodeBadValue, "dp_delta %g is over your whole budget (δ=%g)", f, lim.User.Delta)
			}
			s.settings.delta, s.settings.deltaSet = f, true
		case "dp_confidence":
			f, ok := eval.ToFloat(v)
			if str, isStr := v.(string); isStr && strings.EqualFold(str, "off") {
				f, ok = 0, true
			}
			if !ok || f < 0 || f >= 1 {
				return nil, Errorf(CodeBadValue, "dp_confidence must be in (0, 1), or 0 / 'off', got %v", v)
			}
			s.settings.confidence = f
		case "dp_cache":
			switch strings.ToLower(eval.ToString(v)) {
			case "on", "1", "true":
				s.settings.noCache = false
			case "off", "0", "false":
				s.settings.noCache = true
			default:
				return nil, Errorf(CodeBadValue, "dp_cache must be 'on' or 'off', got %v", v)
			}
		case "dp_mechanism":
			m := strings.ToLower(eval.ToString(v))
			if m != "laplace" && m != "gaussian" {
				return nil, Errorf(CodeBadValue, "dp_mechanism must be 'laplace' or 'gaussian', got '%s'", eval.ToString(v))
			}
			s.settings.mechanism = m
		default:
			s.vars[a.Name] = v
		}
	}
	return &Result{}, nil
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
