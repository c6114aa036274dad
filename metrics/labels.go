package metrics

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Every label value comes from a fixed set or a capped one: each distinct
// value is a separate time series in Prometheus, and an unbounded label (a
// user name, SQL text) would grow the server's memory without limit
// ("Do not overuse labels",
// https://prometheus.io/docs/practices/instrumentation/#do-not-overuse-labels).

// Other is the label value for anything outside a fixed set.
const Other = "other"

// Front doors.
const (
	FrontendMySQL    = "mysql"
	FrontendPostgres = "postgres"
)

// Kinds of statement answered.
const (
	KindDP      = "dp"      // a noisy aggregate charged to the ledger
	KindCatalog = "catalog" // metadata from the backend's catalog
	KindPublic  = "public"  // a read of a public table
	KindAdmin   = "admin"   // a budget or ledger statement
	KindSession = "session" // SET, BEGIN, SHOW variable: answered locally
	KindTrain   = "train"   // TRAIN PRIVATE ...
)

// Reasons a statement is refused or fails.
const (
	ReasonRowLevel     = "row_level"     // would reveal individual rows
	ReasonBudget       = "budget"        // the privacy budget does not allow it
	ReasonSyntax       = "syntax"        // no parser accepts it
	ReasonUnsupported  = "unsupported"   // parsed, but dpproxy cannot answer it privately
	ReasonUnknownTable = "unknown_table" // names a table or column the policy does not know
	ReasonPermission   = "permission"    // an admin statement by a non-admin
	ReasonBackend      = "backend"       // the backend failed or was unreachable
	ReasonTimeout      = "timeout"       // ran out of time or was canceled
)

var (
	frontends = []string{FrontendMySQL, FrontendPostgres, Other}
	kinds     = []string{KindDP, KindCatalog, KindPublic, KindAdmin, KindSession, KindTrain, Other}
	reasons   = []string{
		ReasonRowLevel, ReasonBudget, ReasonSyntax, ReasonUnsupported, ReasonUnknownTable,
		ReasonPermission, ReasonBackend, ReasonTimeout, Other,
	}
)

// Frontend returns f if it is a known front door and Other if not.
func Frontend(f string) string { return oneOf(frontends, f) }

// Kind returns k if it is a known kind of statement and Other if not.
func Kind(k string) string { return oneOf(kinds, k) }

// Reason returns r if it is a known refusal reason and Other if not.
func Reason(r string) string { return oneOf(reasons, r) }

func oneOf(set []string, v string) string {
	if slices.Contains(set, v) {
		return v
	}
	return Other
}

// MaxRoles caps the distinct role label values. Roles come from the policy
// and are few; the cap only guards against a policy with thousands of roles
// or a caller passing something else by mistake. Roles beyond it are
// counted under OverflowRole.
const MaxRoles = 256

// OverflowRole is the role label for charges beyond MaxRoles distinct roles.
// Policy role names are identifiers, so it cannot collide with one.
const OverflowRole = "_other"

// maxRoleLen bounds a role label's length in bytes.
const maxRoleLen = 64

// role returns the label value for role name, admitting new names until
// MaxRoles have been seen.
func (m *Metrics) role(name string) string {
	if name == "" {
		return OverflowRole
	}
	name = truncate(name, maxRoleLen)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.roles[name]; ok {
		return name
	}
	if len(m.roles) >= MaxRoles {
		return OverflowRole
	}
	m.roles[name] = struct{}{}
	return name
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence and
// replaces invalid UTF-8, which Prometheus rejects in label values.
func truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
