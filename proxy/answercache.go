package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// answersNamespace is where released answers are kept in the ledger's store,
// so that a repeat is free after a restart too.
const answersNamespace = "answers"

// defaultAnswerTTL is how long a released answer is served again for free
// when the policy sets no limits.answer_cache_ttl.
const defaultAnswerTTL = time.Hour

// cachedAnswer is a released answer. Serving it again releases nothing new:
// it is post-processing of what the user already paid for.
type cachedAnswer struct {
	At      time.Time `json:"at"`
	Columns []Column  `json:"columns"`
	Rows    [][]any   `json:"rows"`
}

// answerKey identifies a repeat: the same user, statement text, parameters
// (values and types) and privacy parameters (ε, δ, mechanism, confidence). The text is used
// whole, not its fingerprint, so that different literals never share an
// answer.
func (s *Session) answerKey(sqlText string, args []Value) string {
	eps, delta, mech := s.budget()
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00%g\x00%g\x00%s\x00%g", s.user.Name, s.dialect, sqlText, eps, delta, mech, s.settings.confidence)
	// Each parameter with its type: '0' and 0 are different statements
	// (the string may compare as text), so they must not share an answer.
	for _, a := range args {
		fmt.Fprintf(h, "\x00%T\x01%#v", a, a)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (e *Engine) answerTTL() time.Duration {
	if d := e.policy.Limits.AnswerCacheTTL.Duration; d != 0 {
		return d
	}
	return defaultAnswerTTL
}

// cachedResult returns a released answer still within its time to live.
func (s *Session) cachedResult(ctx context.Context, key string) (*Result, bool) {
	if s.settings.noCache || s.engine.answerTTL() < 0 {
		return nil, false
	}
	b, ok, err := s.engine.ledger.Get(ctx, answersNamespace, key)
	if err != nil || !ok {
		return nil, false
	}
	var a cachedAnswer
	if err := json.Unmarshal(b, &a); err != nil || time.Since(a.At) > s.engine.answerTTL() {
		s.engine.ledger.Delete(ctx, answersNamespace, key)
		return nil, false
	}
	res := &Result{Columns: a.Columns, Rows: make([][]Value, len(a.Rows))}
	for i, r := range a.Rows {
		row := make([]Value, len(r))
		for j, v := range r {
			// JSON numbers come back as float64: restore integer columns.
			if f, isFloat := v.(float64); isFloat && j < len(a.Columns) && a.Columns[j].Type == TypeInt {
				v = int64(f)
			}
			row[j] = v
		}
		res.Rows[i] = row
	}
	return res, true
}

// rememberResult keeps a released answer for repeats. A failure to store it
// only costs the user a new charge next time.
func (s *Session) rememberResult(ctx context.Context, key string, res *Result) {
	if s.settings.noCache || s.engine.answerTTL() < 0 {
		return
	}
	b, err := json.Marshal(cachedAnswer{At: time.Now(), Columns: res.Columns, Rows: res.Rows})
	if err == nil {
		err = s.engine.ledger.Put(ctx, answersNamespace, key, b)
	}
	if err != nil {
		s.engine.log.Warn("keeping a released answer failed", append(s.logAttrs(), "err", err)...)
	}
}
