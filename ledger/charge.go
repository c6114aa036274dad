package ledger

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/dgraph-io/badger/v4"
)

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

// Charge records c against the user's allowance and, if the limits have one,
// the role's shared pool. base are the policy file's limits; the budgets set
// in SQL are read and merged over them (ResolveLimits) in the transaction
// that checks and writes the charge, so a concurrent SET PRIVACY BUDGET
// cannot slip between check and write. It returns a *BudgetError, and
// records nothing, if the charge does not fit. When Charge returns without
// error the charge is on disk.
func (l *Ledger) Charge(ctx context.Context, c Charge, base Limits) (Receipt, error) {
	if err := ValidateCharge(c); err != nil {
		return Receipt{}, fmt.Errorf("ledger: charge for user %s refused: %w", c.User, err)
	}
	id, err := l.newID()
	if err != nil {
		return Receipt{}, fmt.Errorf("ledger: charge for user %s: %w", c.User, err)
	}
	err = l.submit(ctx, func(txn *badger.Txn) (error, error) { return chargeTxn(txn, id, c, base) })
	if errors.Is(err, ErrBudgetExceeded) {
		return Receipt{}, err
	}
	if err != nil {
		return Receipt{}, fmt.Errorf("ledger: charge ε=%g δ=%g for user %s: %w", c.Epsilon, c.Delta, c.User, err)
	}
	return Receipt{ID: id.String(), Time: id.time()}, nil
}

// chargeTxn reads the totals and budgets c is checked against, checks them,
// and writes the entry and the new totals — or refuses before writing
// anything.
func chargeTxn(txn *badger.Txn, id entryID, c Charge, base Limits) (refusal, failure error) {
	lim, err := limitsTxn(txn, c.Role, c.User, base)
	if err != nil {
		return nil, err
	}
	if err := ValidateLimits(lim, c); err != nil {
		return err, nil
	}
	var user, pool Spent
	if _, err := getJSON(txn, keyUserTotals(c.User), &user); err != nil {
		return nil, err
	}
	if lim.Pool != nil {
		if _, err := getJSON(txn, keyPoolTotals(c.Role), &pool); err != nil {
			return nil, err
		}
	}
	d, refused := Decide(c, lim, user, pool)
	if refused != nil {
		return refused, nil
	}
	rec := Record{Kind: KindCharge, Charge: c, Outcome: OutcomeCharged, Pooled: d.Pooled,
		Booked: d.Booked, PoolBooked: d.PoolBooked}
	if err := writeEntry(txn, id, rec); err != nil {
		return nil, err
	}
	if err := putJSON(txn, keyUserTotals(c.User), d.User); err != nil {
		return nil, err
	}
	if d.Pooled {
		if err := putJSON(txn, keyPoolTotals(c.Role), d.Pool); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// limitsTxn resolves base with the budgets set in SQL for role and user.
func limitsTxn(txn *badger.Txn, role, user string, base Limits) (Limits, error) {
	var rb *RoleBudget
	if role != "" {
		var r RoleBudget
		found, err := getJSON(txn, keyRoleBudget(role), &r)
		if err != nil {
			return Limits{}, err
		}
		if found {
			rb = &r
		}
	}
	var ub *UserBudget
	var u UserBudget
	found, err := getJSON(txn, keyUserBudget(user), &u)
	if err != nil {
		return Limits{}, err
	}
	if found {
		ub = &u
	}
	return ResolveLimits(base, rb, ub), nil
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
	var rec Record
	found, err := getJSON(txn, keyEntry(id), &rec)
	if err != nil {
		return nil, err
	}
	if refusal := CheckRefundable(rec, found); refusal != nil {
		return refusal, nil
	}
	c := rec.Charge
	var user Spent
	if _, err := getJSON(txn, keyUserTotals(c.User), &user); err != nil {
		return nil, err
	}
	// A charge made before the user's last reset is no longer in the
	// user's totals (IDs sort by time).
	if user.Epoch == "" || id.String() > user.Epoch {
		if err := putJSON(txn, keyUserTotals(c.User), Release(user, c, rec.Booked)); err != nil {
			return nil, err
		}
	}
	if rec.Pooled {
		var pool Spent
		if _, err := getJSON(txn, keyPoolTotals(c.Role), &pool); err != nil {
			return nil, err
		}
		if err := putJSON(txn, keyPoolTotals(c.Role), Release(pool, c, rec.PoolBooked)); err != nil {
			return nil, err
		}
	}
	refund := Record{Kind: KindRefund, Charge: c, Outcome: OutcomeRefunded, Pooled: rec.Pooled, Ref: id.String(),
		Booked: rec.Booked, PoolBooked: rec.PoolBooked}
	if err := writeEntry(txn, refundID, refund); err != nil {
		return nil, err
	}
	rec.Outcome, rec.Ref = OutcomeRefunded, refundID.String()
	return nil, putJSON(txn, keyEntry(id), rec)
}

// CheckRefundable says why the stored record (found or not) cannot be
// refunded, or nil if it can.
func CheckRefundable(rec Record, found bool) error {
	switch {
	case !found:
		return ErrNoSuchEntry
	case rec.Kind != KindCharge:
		return fmt.Errorf("the entry is a %s, not a charge", rec.Kind)
	case rec.Outcome == OutcomeRefunded:
		return fmt.Errorf("%w (by %s)", ErrAlreadyRefunded, rec.Ref)
	}
	return nil
}

// writeEntry adds an audit entry and, if it names a user, its index key.
func writeEntry(txn *badger.Txn, id entryID, rec Record) error {
	if err := putJSON(txn, keyEntry(id), rec); err != nil {
		return err
	}
	if rec.Charge.User == "" {
		return nil
	}
	return txn.Set(keyIndex(rec.Charge.User, id), nil)
}

// ValidateCharge checks a charge before it is submitted.
func ValidateCharge(c Charge) error {
	if c.User == "" {
		return errors.New("the charge names no user")
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"ε", c.Epsilon}, {"δ", c.Delta}, {"ρ", c.Rho}, {"δ in ρ", c.DeltaInRho}} {
		if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x < 0 {
			return fmt.Errorf("%s=%g is not a finite, non-negative cost", v.name, v.x)
		}
	}
	if c.Delta > 1 {
		return fmt.Errorf("δ=%g is more than 1", c.Delta)
	}
	if c.DeltaInRho > c.Delta {
		return fmt.Errorf("the δ accounted by ρ (%g) is more than the charge's δ (%g)", c.DeltaInRho, c.Delta)
	}
	if c.DeltaInRho > 0 && c.Rho == 0 {
		return fmt.Errorf("the charge says ρ accounts for δ=%g but states no ρ", c.DeltaInRho)
	}
	return nil
}

// ValidateLimits checks the resolved limits of charge c.
func ValidateLimits(lim Limits, c Charge) error {
	if lim.Pool != nil && c.Role == "" {
		return errors.New("a role pool is given but the charge names no role")
	}
	totals := []Budget{lim.User, lim.MaxPerQuery}
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
