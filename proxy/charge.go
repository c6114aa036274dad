package proxy

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"time"

	"github.com/dpproxy/dpproxy/backend"
	"github.com/dpproxy/dpproxy/ledger"
)

// withCharge is the one path by which a statement reads private data: every
// DP answer, TRAIN and EVALUATE goes through it, in the shape of Badger's
// Update closures. In order:
//
//  1. Pin a backend connection and prove it answers (and set the backend's
//     own statement timeout). A failure here happens before anything is
//     charged or any row read: the client is told the backend is
//     unavailable, and nothing is spent. Then have the backend prepare each
//     statement in check without running it: what preparing reports (a
//     type the backend will not compare, a missing column) depends on the
//     statement and the schema only, so it is told to the client, free.
//  2. Charge c in the ledger (durably). A refusal (budget, per-query cap,
//     floor) writes nothing and reaches no backend.
//  3. Run read on the pinned connection. From here on, whatever happens is an
//     outcome of the release (Haeberlen, Pierce, Narayan, "Differential
//     Privacy Under Fire", USENIX Security 2011): the charge stands, a failure
//     of any kind returns one generic message with an incident id (the cause
//     goes to the log only), and the reply — answer or error — leaves at the
//     next multiple of limits.response_quantum after the charge.
//
// There is no refund: a backend error, a timeout or a hit limit after step 2
// could depend on a row's value, and a refund would make it a free oracle.
func (s *Session) withCharge(ctx context.Context, c ledger.Charge, check []string, read func(ctx context.Context, q querier) (*Result, error)) (*Result, ledger.Receipt, error) {
	pin, err := s.engine.backend.Pin(ctx, 0)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ledger.Receipt{}, ctxErr
		}
		s.engine.log.Warn("backend unavailable", append(s.logAttrs(), "err", err)...)
		return nil, ledger.Receipt{}, &Error{Code: CodeBackend, Msg: "the backend is unavailable; nothing was charged, try again later", Err: err}
	}
	for _, q := range check {
		if err := pin.Check(ctx, q); err != nil {
			pin.Close()
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ledger.Receipt{}, ctxErr
			}
			s.engine.log.Info("the backend refused to prepare a statement", append(s.logAttrs(), "sql", clip(q), "err", err)...)
			return nil, ledger.Receipt{}, &Error{Code: CodeUnsupported, Err: err,
				Msg: "the backend cannot run the SQL dpproxy wrote for this statement (nothing was charged): " + err.Error()}
		}
	}
	receipt, err := s.engine.ledger.Charge(ctx, c, s.limits())
	if err != nil {
		pin.Close()
		return nil, ledger.Receipt{}, err
	}
	charged := time.Now() // monotonic: the ledger's clock may be another host's
	s.engine.metrics.Charged(s.role.Name, c.Epsilon, c.Delta)
	res, err := s.readCharged(ctx, pin, read)
	// The connection goes back to the pool before the wait: the quantum
	// holds the reply, not the backend.
	pin.Close()
	s.engine.waitQuantum(charged)
	if err != nil {
		return nil, receipt, s.afterCharge(ctx, receipt, c, err)
	}
	return res, receipt, nil
}

// querier is what a charged read may ask of the backend.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readCharged runs read, turning a panic into an error so that even a crash
// after the charge gets the generic reply (Session.run would otherwise
// answer it before the quantum).
func (s *Session) readCharged(ctx context.Context, pin *backend.Pinned, read func(ctx context.Context, q querier) (*Result, error)) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.engine.log.Error("panic after the charge", append(s.logAttrs(), "panic", r)...)
			res, err = nil, errors.New("panic after the charge")
		}
	}()
	return read(ctx, pin)
}

// afterCharge is the reply to any failure after the charge: the same text
// whatever the cause (a backend error, a timeout the backend enforced, a
// limit, a bug), so that the failure's kind tells nothing about the data.
// Only the client's own cancellation is told apart: the client knows it.
func (s *Session) afterCharge(ctx context.Context, receipt ledger.Receipt, c ledger.Charge, cause error) error {
	incident := newIncidentID()
	s.engine.log.Warn("statement failed after its charge", append(s.logAttrs(),
		"incident", incident, "charge", receipt.ID, "epsilon", c.Epsilon, "delta", c.Delta, "err", cause)...)
	if errors.Is(ctx.Err(), context.Canceled) {
		return &Error{Code: CodeCanceled, Msg: "query was canceled; its charge stands (incident " + incident + ")", Err: cause}
	}
	return &Error{Code: CodeBackend, Err: cause, Msg: "dpproxy could not complete this statement after charging it; the charge stands" +
		" (incident " + incident + ": the DBA finds the cause in dpproxy's log)"}
}

// newIncidentID names one failure in the log and in the client's message.
func newIncidentID() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "unknown"
	}
	return hex.EncodeToString(b[:])
}

// waitQuantum holds a charged statement's reply until the next multiple of
// limits.response_quantum after its charge, so that the reply's latency,
// as the client can measure it, is a multiple of the quantum: a
// data-dependent delay shorter than the quantum moves the reply to another
// multiple only when it crosses a boundary. This is the "predictable
// transactions" defence of Haeberlen et al. (2011), §6, with a quantum in
// place of a per-query timeout. It does not listen to ctx: a deadline must
// not release the reply early.
func (e *Engine) waitQuantum(charged time.Time) {
	q := e.policy.Limits.ResponseQuantum.Duration
	if q <= 0 {
		return
	}
	elapsed := time.Since(charged)
	n := elapsed/q + 1
	if elapsed%q == 0 && elapsed > 0 {
		n = elapsed / q
	}
	time.Sleep(time.Until(charged.Add(n * q)))
}
