package ledger

import (
	"fmt"
	"math"
)

// Accounting: the tighter of basic and zCDP composition, as a privacy filter.
//
// Each budget (a user's allowance, a role's pool) is a total (ε_B, δ_B) that
// the whole sequence of answers charged to it must satisfy. Two accountants
// bound that sequence:
//
//   - Basic composition (Dwork & Roth 2014, Theorem 3.16): (Σεᵢ, Σδᵢ).
//   - Approximate zCDP (Bun & Steinke 2016): charge i is δ̂ᵢ-approximately
//     ρᵢ-zCDP (their Definition 8.1), where δ̂ᵢ is the part of its δ that ρᵢ
//     does not describe (partition selection's δ; not the δ a Gaussian was
//     calibrated at, whose privacy loss ρᵢ describes completely). ρ and δ̂ add
//     up under composition (ibid., Lemma 1.7 and §8). Pure ε-DP is
//     ε²/2-zCDP (ibid., Proposition 1.4). ρ-zCDP gives, for every δ′ > 0,
//     privacy loss above ε(ρ, δ′) = ρ + 2√(ρ·ln(1/δ′)) with probability at
//     most δ′ (ibid., Proposition 1.3; see zcdpEpsilon).
//
// Answering while EITHER accountant fits, naively, is not sound when the
// analyst chooses ε and δ adaptively (each query's parameters may depend on
// earlier noisy answers): different runs would end under different views and
// their failure probabilities would add up. The ledger therefore runs the two
// as one privacy filter with this exact rule:
//
//  1. A fixed share of δ_B, Reserved = ZCDPDeltaShare·δ_B, is held back for
//     the zCDP tail δ′ of Proposition 1.3. Charges may book at most
//     δ_B − Reserved of δ.
//  2. A budget starts in basic mode. A charge is admitted in basic mode when
//     Σε after it is ≤ ε_B and the booked δ plus its whole δ is ≤ δ_B −
//     Reserved; it books its whole δ.
//  3. Otherwise it is admitted in zCDP mode when ε(Σρ, Reserved) after it is
//     ≤ ε_B and the booked δ plus its δ̂ is ≤ δ_B − Reserved; it books δ̂, and
//     the budget stays in zCDP mode from then on (the mode is sticky).
//  4. Otherwise it is refused and nothing is written.
//
// Why this is (ε_B, δ_B)-DP: by the decomposition of an (ε, δ)-DP pair of
// distributions into a pure ε-DP pair and a remainder of mass δ (Kairouz, Oh
// & Viswanath 2015; Murtagh & Vadhan 2016), each charge has a bad event of probability at most the δ
// its analysis uses, outside of which its loss is bounded. A run that ends in
// basic mode was in basic mode at every charge (rule 3 is sticky), so every
// event its analysis needs was booked; a run that ends in zCDP mode needs
// only the δ̂ events, each at most what its charge booked. Whether an event
// is booked is decided before the mechanism runs, so the probability that
// any needed event happens is at most the booked total, ≤ δ_B − Reserved
// (a union bound over adaptively chosen probabilities, as in the basic
// composition filter of Rogers, Roth, Ullman & Vadhan 2016). Outside those
// events a basic-mode run lost at most Σε ≤ ε_B, and a zCDP-mode run kept
// Σρ ≤ ρ* (the ρ at which ε(ρ, Reserved) = ε_B) at every step, which is a
// zCDP filter (Feldman & Zrnic 2021, Rényi filter; Whitehouse, Ramdas,
// Rogers & Wu 2023), so its loss exceeds ε_B with probability at most
// Reserved. Together: loss above ε_B with probability at most δ_B.
//
// A Gaussian-heavy user gains: each Gaussian books no δ in zCDP mode and
// costs only ρ, which grows linearly, while ε(ρ) grows like √ρ. A
// Laplace-only user gains too once many small queries make Σεᵢ²/2 the
// smaller cost. The price is the reserved tenth of δ.

// ZCDPDeltaShare is the share of each budget's δ reserved for the tail of the
// zCDP-to-(ε, δ) conversion (Bun & Steinke 2016, Proposition 1.3). A tenth
// costs basic accounting 10% of its δ, and the zCDP view converts at δ_B/10
// instead of δ_B, which raises ε(ρ) by the factor √(ln(10/δ_B)/ln(1/δ_B)):
// about 9% at δ_B = 1e-5.
const ZCDPDeltaShare = 0.1

// Accounting modes of a budget.
const (
	ModeBasic = "basic"
	ModeZCDP  = "zcdp"
)

// Spent is what a user or a role pool has spent over the charges not
// refunded (and, for a user, since the last reset): the running sums of both
// accountants and the filter's state. See Account for the (ε, δ) views.
type Spent struct {
	// Epsilon and Delta are basic composition: Σεᵢ and Σδᵢ.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Rho is Σρᵢ, each charge's ρ (ε²/2 for a charge that states none).
	Rho float64 `json:"rho"`
	// DeltaResidual is Σδ̂ᵢ: the δ that ρ does not describe.
	DeltaResidual float64 `json:"delta_residual,omitempty"`
	// DeltaBooked is the δ booked by the filter: δᵢ for charges admitted in
	// basic mode, δ̂ᵢ for charges admitted in zCDP mode.
	DeltaBooked float64 `json:"delta_booked,omitempty"`
	// ZCDP is true once a charge was admitted in zCDP mode.
	ZCDP    bool `json:"zcdp,omitempty"`
	Charges int  `json:"charges"`
	// Epoch is the ID of the reset entry that last set these totals to
	// zero; charges older than it are not in them (users only).
	Epoch string `json:"epoch,omitempty"`
}

// Accounting is a Spent seen against a budget: both accountants' (ε, δ) and
// the effective one the check uses.
type Accounting struct {
	Total Budget
	// Basic is (Σε, Σδ).
	Basic Budget
	// Rho is Σρ; ZCDP is (ε(Σρ, Reserved), Σδ̂ + Reserved).
	Rho  float64
	ZCDP Budget
	// Reserved is the δ held back for the zCDP conversion.
	Reserved float64
	// Mode is ModeBasic or ModeZCDP.
	Mode string
	// Effective is the tighter bound the filter allows: ε is min(Σε, ε(Σρ))
	// in basic mode and ε(Σρ) in zCDP mode; δ is the δ booked. A charge is
	// admitted only if, after it, Effective.Epsilon ≤ Total.Epsilon and
	// Effective.Delta ≤ Total.Delta − Reserved.
	Effective Budget
}

// Left is what can still be spent: ε and δ (the reserved share excluded).
func (a Accounting) Left() Budget {
	return Budget{Epsilon: max(0, a.Total.Epsilon-a.Effective.Epsilon),
		Delta: max(0, a.Total.Delta-a.Reserved-a.Effective.Delta)}
}

// Account returns s seen against the budget total.
func (s Spent) Account(total Budget) Accounting {
	reserved := ZCDPDeltaShare * total.Delta
	a := Accounting{
		Total:    total,
		Basic:    Budget{Epsilon: s.Epsilon, Delta: s.Delta},
		Rho:      s.Rho,
		ZCDP:     Budget{Epsilon: zcdpEpsilon(s.Rho, reserved), Delta: s.DeltaResidual + reserved},
		Reserved: reserved,
		Mode:     ModeBasic,
	}
	a.Effective = Budget{Epsilon: min(a.Basic.Epsilon, a.ZCDP.Epsilon), Delta: s.DeltaBooked}
	if s.ZCDP {
		a.Mode = ModeZCDP
		a.Effective.Epsilon = a.ZCDP.Epsilon
	}
	return a
}

// zcdpEpsilon converts ρ-zCDP to (ε, δ)-DP: ε = ρ + 2√(ρ·ln(1/δ)) (Bun &
// Steinke 2016, Proposition 1.3). With ρ = 0 there is no privacy loss at all;
// with δ = 0 no finite ε holds for ρ > 0.
func zcdpEpsilon(rho, delta float64) float64 {
	switch {
	case rho == 0:
		return 0
	case delta <= 0:
		return math.Inf(1)
	case delta >= 1:
		return rho
	}
	return rho + 2*math.Sqrt(rho*math.Log(1/delta))
}

// cost is a charge as the accountants see it.
type cost struct {
	epsilon, delta float64 // basic
	rho, residual  float64 // approximate zCDP: δ̂-approximately ρ-zCDP
}

// costOf reads a charge's cost. A charge that states no ρ is taken as
// (ε, δ)-DP, which is δ-approximately ε²/2-zCDP: the decomposition of an
// (ε, δ)-DP pair (Kairouz, Oh & Viswanath 2015) leaves, outside an event
// of probability δ, a pure ε-DP pair, which is ε²/2-zCDP (Bun & Steinke 2016,
// Proposition 1.4).
func costOf(c Charge) cost {
	if c.Rho == 0 {
		return cost{epsilon: c.Epsilon, delta: c.Delta, rho: c.Epsilon * c.Epsilon / 2, residual: c.Delta}
	}
	return cost{epsilon: c.Epsilon, delta: c.Delta, rho: c.Rho, residual: max(0, c.Delta-c.DeltaInRho)}
}

// admit applies the filter's rule (see the comment at the top of this file)
// to one charge against one budget. It returns the new totals and the δ the
// charge booked, or ok=false if the charge does not fit.
func admit(s Spent, c cost, total Budget) (next Spent, booked float64, ok bool) {
	reserved := ZCDPDeltaShare * total.Delta
	bookable := total.Delta - reserved
	next = s
	next.Epsilon += c.epsilon
	next.Delta += c.delta
	next.Rho += c.rho
	next.DeltaResidual += c.residual
	next.Charges++
	if !s.ZCDP && fits(s.Epsilon, c.epsilon, total.Epsilon) && fits(s.DeltaBooked, c.delta, bookable) {
		next.DeltaBooked += c.delta
		return next, c.delta, true
	}
	if zcdpEpsilon(next.Rho, reserved) <= total.Epsilon*(1+relTol) && fits(s.DeltaBooked, c.residual, bookable) {
		next.DeltaBooked += c.residual
		next.ZCDP = true
		return next, c.residual, true
	}
	return s, 0, false
}

// release removes a refunded charge (its cost and the δ it booked) from s.
// Float subtraction can leave a residue of a few ulps: clamp at zero, and
// reset exactly to zero, mode included, when no charge remains (the sequence
// is then empty: nothing was released). Otherwise the mode stays sticky.
func (s Spent) release(c cost, booked float64) Spent {
	if s.Charges <= 1 {
		return Spent{Epoch: s.Epoch}
	}
	s.Epsilon = max(0, s.Epsilon-c.epsilon)
	s.Delta = max(0, s.Delta-c.delta)
	s.Rho = max(0, s.Rho-c.rho)
	s.DeltaResidual = max(0, s.DeltaResidual-c.residual)
	s.DeltaBooked = max(0, s.DeltaBooked-booked)
	s.Charges--
	return s
}

// Decision is the outcome of checking one charge against its limits: the new
// totals to write, or the refusal. Both ledger implementations call Decide
// inside their transaction, so they account identically.
type Decision struct {
	User, Pool Spent   // the new totals (Pool only if Pooled)
	Pooled     bool    // the charge draws from its role's pool
	Booked     float64 // δ booked in the user's allowance
	PoolBooked float64 // δ booked in the pool
}

// Decide checks charge c, whose user and pool have spent user and pool,
// against lim (already resolved with ResolveLimits). It returns a
// *BudgetError if c does not fit.
func Decide(c Charge, lim Limits, user, pool Spent) (Decision, error) {
	asked := Budget{Epsilon: c.Epsilon, Delta: c.Delta}
	if floor := lim.MinEpsilonPerQuery; floor > 0 && !(c.Epsilon >= floor*(1-relTol)) {
		return Decision{}, &BudgetError{Who: c.Role, Asked: asked, Total: Budget{Epsilon: floor}, Floor: true}
	}
	if q := lim.MaxPerQuery; (q.Epsilon > 0 && c.Epsilon > q.Epsilon*(1+relTol)) || (q.Delta > 0 && c.Delta > q.Delta*(1+relTol)) {
		return Decision{}, &BudgetError{Who: c.Role, Asked: asked, Total: q, PerQuery: true}
	}
	k := costOf(c)
	var d Decision
	var ok bool
	if d.User, d.Booked, ok = admit(user, k, lim.User); !ok {
		return Decision{}, &BudgetError{Who: c.User, Asked: asked, Spent: user.Account(lim.User)}
	}
	if lim.Pool != nil {
		d.Pooled = true
		if d.Pool, d.PoolBooked, ok = admit(pool, k, *lim.Pool); !ok {
			return Decision{}, &BudgetError{Who: c.Role, Asked: asked, Spent: pool.Account(*lim.Pool), Pool: true}
		}
	}
	return d, nil
}

// Release is Decide undone for a refunded charge: the totals without it.
// booked is the δ the charge booked in s (Entry.Booked or Entry.PoolBooked).
func Release(s Spent, c Charge, booked float64) Spent { return s.release(costOf(c), booked) }

// String is a one-line summary, e.g. "ε=1.2 of 10 (basic; Σε=1.2, zCDP ε=3.1 at ρ=0.05), δ=1e-06 of 1e-05".
func (a Accounting) String() string {
	return fmt.Sprintf("ε=%.6g of %g (%s; Σε=%.6g, zCDP ε=%.6g at ρ=%.6g), δ=%.6g of %g (%.6g reserved)",
		a.Effective.Epsilon, a.Total.Epsilon, a.Mode, a.Basic.Epsilon, a.ZCDP.Epsilon, a.Rho,
		a.Effective.Delta, a.Total.Delta, a.Reserved)
}
