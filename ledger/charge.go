package ledger

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Budget is an (ε, δ) allowance or amount.
type Budget struct{ Epsilon, Delta float64 }

// Limits are what one charge is checked against.
type Limits struct {
	User Budget  // the user's own total allowance
	Pool *Budget // optional: the role's pool shared by all its users
}

// Charge is the privacy cost of one released answer.
type Charge struct {
	User        string  `json:"user"`
	Role        string  `json:"role,omitempty"`
	Statement   string  `json:"statement,omitempty"`   // SQL text
	Fingerprint string  `json:"fingerprint,omitempty"` // statement fingerprint, computed by the engine
	Mechanism   string  `json:"mechanism,omitempty"`   // "laplace", "gaussian", ...
	Epsilon     float64 `json:"epsilon"`
	Delta       float64 `json:"delta"`
	// Rho is the zCDP cost (Bun & Steinke 2016) of Gaussian noise; zero for
	// mechanisms accounted in (ε, δ) only.
	Rho float64 `json:"rho,omitempty"`
}

// Receipt identifies a recorded charge; pass its ID to Refund.
type Receipt struct {
	ID   string
	Time time.Time
}

// Spent is what a user or a role pool has spent over the charges not refunded.
//
// Epsilon and Delta are basic composition (Dwork & Roth 2014, Theorem 3.16):
// the sums of the charges' ε and δ, and they are what Charge checks today.
// Rho is the sum of the charges' ρ: zCDP composes additively (Bun & Steinke
// 2016, Lemma 2.3), and ρ-zCDP implies (ρ + 2√(ρ·ln(1/δ)), δ)-DP for every δ > 0
// (ibid., Proposition 1.3).
//
// TODO(accounting): report, and check, the tighter of basic and zCDP
// composition; ρ is already kept in every total for that.
type Spent struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	Rho     float64 `json:"rho"`
	Charges int     `json:"charges"`
}

// Entry kinds and outcomes in the audit trail.
const (
	KindCharge      = "charge"
	KindRefund      = "refund"
	OutcomeCharged  = "charged"
	OutcomeRefunded = "refunded"
)

// Entry is one line of the audit trail.
type Entry struct {
	ID   string
	Time time.Time
	Kind string // KindCharge or KindRefund
	Charge
	Outcome string // OutcomeCharged, or OutcomeRefunded once the charge was refunded
	Pooled  bool   // the charge also drew from its role's shared pool
	// Ref links a refunded charge and its refund: the refund's ID on the
	// charge entry, the charge's ID on the refund entry.
	Ref string
}

// record is an Entry as stored under keyEntry; its ID and time are the key.
type record struct {
	Kind    string `json:"kind"`
	Charge  Charge `json:"charge"`
	Outcome string `json:"outcome"`
	Pooled  bool   `json:"pooled,omitempty"`
	Ref     string `json:"ref,omitempty"`
}

func (r record) entry(id entryID) Entry {
	return Entry{ID: id.String(), Time: id.time(), Kind: r.Kind, Charge: r.Charge,
		Outcome: r.Outcome, Pooled: r.Pooled, Ref: r.Ref}
}

// relTol is the relative slack of the budget check. Charges are summed in
// float64, so a budget of exactly N charges of ε can sum to N·ε plus a few ulps
// (0.1+0.1+0.1 = 0.30000000000000004 > 0.3). A rounding error of n additions is
// at most about n·2⁻⁵³ relative (Higham 2002, §4.2), so 1e-12 covers ~10⁴
// charges per user while overspending by at most one part in 10¹².
const relTol = 1e-12

// fits reports whether spending asked on top of spent stays within total.
func fits(spent, asked, total float64) bool {
	return spent+asked <= total*(1+relTol)
}

// Charge records c against the user's allowance and, if lim.Pool is set, the
// role's shared pool. It returns a *BudgetError, and records nothing, if either
// would be overspent. When Charge returns without error the charge is on disk.
func (l *Ledger) Charge(ctx context.Context, c Charge, lim Limits) (Receipt, error) {
	if err := validate(c, lim); err != nil {
		return Receipt{}, fmt.Errorf("ledger: charge for user %s refused: %w", c.User, err)
	}
	id, err := l.newID()
	if err != nil {
		return Receipt{}, fmt.Errorf("ledger: charge for user %s: %w", c.User, err)
	}
	err = l.submit(ctx, func(txn *badger.Txn) (error, error) { return chargeTxn(txn, id, c, lim) })
	if errors.Is(err, ErrBudgetExceeded) {
		return Receipt{}, err
	}
	if err != nil {
		return Receipt{}, fmt.Errorf("ledger: charge ε=%g δ=%g for user %s: %w", c.Epsilon, c.Delta, c.User, err)
	}
	return Receipt{ID: id.String(), Time: id.time()}, nil
}

// chargeTxn reads the totals c is checked against, checks them, and writes the
// entry and the new totals — or refuses with a *BudgetError before writing
// anything.
func chargeTxn(txn *badger.Txn, id entryID, c Charge, lim Limits) (refusal, failure error) {
	asked := Budget{Epsilon: c.Epsilon, Delta: c.Delta}
	var user Spent
	if _, err := getJSON(txn, keyUserTotals(c.User), &user); err != nil {
		return nil, err
	}
	if !fits(user.Epsilon, c.Epsilon, lim.User.Epsilon) || !fits(user.Delta, c.Delta, lim.User.Delta) {
		return &BudgetError{Who: c.User, Asked: asked, Spent: user.budget(), Total: lim.User}, nil
	}
	var pool Spent
	if lim.Pool != nil {
		if _, err := getJSON(txn, keyPoolTotals(c.Role), &pool); err != nil {
			return nil, err
		}
		if !fits(pool.Epsilon, c.Epsilon, lim.Pool.Epsilon) || !fits(pool.Delta, c.Delta, lim.Pool.Delta) {
			return &BudgetError{Who: c.Role, Asked: asked, Spent: pool.budget(), Total: *lim.Pool, Pool: true}, nil
		}
	}
	rec := record{Kind: KindCharge, Charge: c, Outcome: OutcomeCharged, Pooled: lim.Pool != nil}
	if err := writeEntry(txn, id, rec); err != nil {
		return nil, err
	}
	if err := putJSON(txn, keyUserTotals(c.User), user.add(c)); err != nil {
		return nil, err
	}
	if lim.Pool != nil {
		if err := putJSON(txn, keyPoolTotals(c.Role), pool.add(c)); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// Refund credits back the charge with the given receipt ID, for a query whose
// answer was never released. The charge entry is marked refunded and a refund
// entry is added, both in one transaction with the new totals. A charge is
// refunded at most once: refunding it again returns ErrAlreadyRefunded.
func (l *Ledger) Refund(ctx context.Context, idText string) error {
	id, err := parseID(idText)
	if err != nil {
		return fmt.Errorf("ledger: refund: %w", err)
	}
	refundID, err := l.newID()
	if err == nil {
		err = l.submit(ctx, func(txn *badger.Txn) (error, error) { return refundTxn(txn, id, refundID) })
	}
	if err != nil {
		return fmt.Errorf("ledger: refund of charge %s: %w", idText, err)
	}
	return nil
}

// refundTxn subtracts charge id from the totals it was added to, marks it
// refunded and records the refund as entry refundID.
func refundTxn(txn *badger.Txn, id, refundID entryID) (refusal, failure error) {
	var rec record
	found, err := getJSON(txn, keyEntry(id), &rec)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return ErrNoSuchEntry, nil
	case rec.Kind != KindCharge:
		return fmt.Errorf("entry %s is a %s, not a charge", id, rec.Kind), nil
	case rec.Outcome == OutcomeRefunded:
		return fmt.Errorf("%w (by %s)", ErrAlreadyRefunded, rec.Ref), nil
	}
	c := rec.Charge
	var user Spent
	if _, err := getJSON(txn, keyUserTotals(c.User), &user); err != nil {
		return nil, err
	}
	if err := putJSON(txn, keyUserTotals(c.User), user.sub(c)); err != nil {
		return nil, err
	}
	if rec.Pooled {
		var pool Spent
		if _, err := getJSON(txn, keyPoolTotals(c.Role), &pool); err != nil {
			return nil, err
		}
		if err := putJSON(txn, keyPoolTotals(c.Role), pool.sub(c)); err != nil {
			return nil, err
		}
	}
	refund := record{Kind: KindRefund, Charge: c, Outcome: OutcomeRefunded, Pooled: rec.Pooled, Ref: id.String()}
	if err := writeEntry(txn, refundID, refund); err != nil {
		return nil, err
	}
	rec.Outcome, rec.Ref = OutcomeRefunded, refundID.String()
	return nil, putJSON(txn, keyEntry(id), rec)
}

// writeEntry adds an audit entry and its per-user index key.
func writeEntry(txn *badger.Txn, id entryID, rec record) error {
	if err := putJSON(txn, keyEntry(id), rec); err != nil {
		return err
	}
	return txn.Set(keyIndex(rec.Charge.User, id), nil)
}

func (s Spent) budget() Budget { return Budget{Epsilon: s.Epsilon, Delta: s.Delta} }

func (s Spent) add(c Charge) Spent {
	return Spent{Epsilon: s.Epsilon + c.Epsilon, Delta: s.Delta + c.Delta, Rho: s.Rho + c.Rho,
		Charges: s.Charges + 1}
}

// sub removes a refunded charge. Float subtraction can leave a residue of a
// few ulps below zero, or above it once nothing is left: clamp at zero, and
// reset exactly to zero when no charge remains.
func (s Spent) sub(c Charge) Spent {
	if s.Charges <= 1 {
		return Spent{}
	}
	return Spent{Epsilon: max(0, s.Epsilon-c.Epsilon), Delta: max(0, s.Delta-c.Delta),
		Rho: max(0, s.Rho-c.Rho), Charges: s.Charges - 1}
}

func validate(c Charge, lim Limits) error {
	if c.User == "" {
		return errors.New("the charge names no user")
	}
	if lim.Pool != nil && c.Role == "" {
		return errors.New("a role pool is given but the charge names no role")
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"ε", c.Epsilon}, {"δ", c.Delta}, {"ρ", c.Rho}} {
		if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x < 0 {
			return fmt.Errorf("%s=%g is not a finite, non-negative cost", v.name, v.x)
		}
	}
	if c.Delta > 1 {
		return fmt.Errorf("δ=%g is more than 1", c.Delta)
	}
	totals := []Budget{lim.User}
	if lim.Pool != nil {
		totals = append(totals, *lim.Pool)
	}
	for _, t := range totals {
		if math.IsNaN(t.Epsilon) || math.IsNaN(t.Delta) || t.Epsilon < 0 || t.Delta < 0 {
			return fmt.Errorf("the budget ε=%g δ=%g is not a non-negative amount", t.Epsilon, t.Delta)
		}
	}
	return nil
}
