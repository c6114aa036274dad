package parser

// SetPrivacyBudget is a DBA's budget statement:
//
//	SET PRIVACY BUDGET FOR ROLE r [EPSILON x [DELTA y]] [MAX EPSILON PER QUERY x]
//	                               [MAX DELTA PER QUERY y] [POOL EPSILON x [DELTA y]]
//	SET PRIVACY BUDGET FOR USER u EPSILON x [DELTA y]
//
// A nil field is left as it is.
type SetPrivacyBudget struct {
	Role, User         string
	Epsilon, Delta     *float64
	MaxEpsilonPerQuery *float64
	MaxDeltaPerQuery   *float64
	PoolEpsilon        *float64
	PoolDelta          *float64
}

// ResetPrivacyBudget is RESET PRIVACY BUDGET FOR USER u: the user's spent
// budget goes back to zero (logged in the ledger).
type ResetPrivacyBudget struct{ User string }

// ShowPrivacyLedger is SHOW PRIVACY LEDGER [FOR USER u] [LIMIT n]: the audit
// trail, newest first. Limit 0 means the default.
type ShowPrivacyLedger struct {
	User  string
	Limit int
}

func (*SetPrivacyBudget) statement()   {}
func (*ResetPrivacyBudget) statement() {}
func (*ShowPrivacyLedger) statement()  {}

// ExplainPrivacy is EXPLAIN PRIVACY <select>: what answering the query would
// cost and how accurate each number would be, without running it.
type ExplainPrivacy struct {
	Select Statement
	Params int // placeholders in the embedded query
}

func (*ExplainPrivacy) statement() {}
