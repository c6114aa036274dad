package ledger

import "time"

// Charge is the privacy cost of one released answer.
type Charge struct {
	User        string  `json:"user"`
	Role        string  `json:"role,omitempty"`
	Statement   string  `json:"statement,omitempty"`   // SQL text
	Fingerprint string  `json:"fingerprint,omitempty"` // statement fingerprint, computed by the engine
	Mechanism   string  `json:"mechanism,omitempty"`   // "laplace", "gaussian", ...
	Epsilon     float64 `json:"epsilon"`
	Delta       float64 `json:"delta"`
	// Rho is the zCDP cost (Bun & Steinke 2016) of the whole answer: Δ²/(2σ²)
	// per Gaussian release, ε²/2 per pure ε-DP part. Zero means "not stated":
	// the ledger then takes the charge as (ε, δ)-DP, i.e. δ-approximately
	// ε²/2-zCDP (see costOf).
	Rho float64 `json:"rho,omitempty"`
	// DeltaInRho is the part of Delta that Rho already accounts for: the δ
	// the Gaussian releases were calibrated at, whose privacy loss ρ describes
	// completely. The rest of Delta (partition selection's) stays a δ in the
	// zCDP view too. Zero, the safe default, counts all of Delta there.
	DeltaInRho float64 `json:"delta_in_rho,omitempty"`
}

// Receipt identifies a recorded charge; pass its ID to Refund.
type Receipt struct {
	ID   string
	Time time.Time
}

// Entry kinds and outcomes in the audit trail.
const (
	KindCharge      = "charge"
	KindRefund      = "refund"
	KindBudget      = "budget" // a budget set in SQL
	KindReset       = "reset"  // a user's spending set back to zero
	OutcomeCharged  = "charged"
	OutcomeRefunded = "refunded"
)

// Entry is one line of the audit trail.
type Entry struct {
	ID   string
	Time time.Time
	Kind string // KindCharge, KindRefund, KindBudget or KindReset
	// Charge is the charge (KindCharge, KindRefund); for KindBudget and
	// KindReset only User (or Role, for a role's budget) is set.
	Charge
	Outcome string // OutcomeCharged, or OutcomeRefunded once the charge was refunded
	Pooled  bool   // the charge also drew from its role's shared pool
	// Ref links a refunded charge and its refund: the refund's ID on the
	// charge entry, the charge's ID on the refund entry.
	Ref string
	// Booked and PoolBooked are the δ the accountant booked for the charge
	// in the user's allowance and in the pool (see account.go).
	Booked, PoolBooked float64
	// By is the admin who set a budget or reset a user.
	By string
	// Old and New are the budget set in SQL before and after (KindBudget).
	Old, New *BudgetChange
	// Reset is what the user had spent before the reset (KindReset).
	Reset *Spent
}

// Record is an Entry as stored; its ID and time are the key. Exported for
// the etcd implementation, which stores the same JSON.
type Record struct {
	Kind       string        `json:"kind"`
	Charge     Charge        `json:"charge"`
	Outcome    string        `json:"outcome,omitempty"`
	Pooled     bool          `json:"pooled,omitempty"`
	Ref        string        `json:"ref,omitempty"`
	Booked     float64       `json:"booked,omitempty"`
	PoolBooked float64       `json:"pool_booked,omitempty"`
	By         string        `json:"by,omitempty"`
	Old        *BudgetChange `json:"old,omitempty"`
	New        *BudgetChange `json:"new,omitempty"`
	Reset      *Spent        `json:"reset,omitempty"`
}

// Entry is r as entry id at time t.
func (r Record) Entry(id string, t time.Time) Entry {
	return Entry{ID: id, Time: t, Kind: r.Kind, Charge: r.Charge, Outcome: r.Outcome, Pooled: r.Pooled,
		Ref: r.Ref, Booked: r.Booked, PoolBooked: r.PoolBooked, By: r.By, Old: r.Old, New: r.New, Reset: r.Reset}
}
