// Package parser turns SQL text from either front door into one dialect-neutral
// query model. The MySQL dialect is parsed by the TiDB parser, the PostgreSQL
// dialect by PostgreSQL's own parser (pg_query); dpproxy's own statements
// (SHOW PRIVACY BUDGET, ...) by a small grammar of ours. Everything after this
// package (rewrite, sensitivity, the engine) sees only the model below.
package parser

// Dialect names the SQL dialect of a front door or a backend.
type Dialect int

const (
	MySQL Dialect = iota
	PostgreSQL
	SQLite
)

func (d Dialect) String() string {
	switch d {
	case MySQL:
		return "mysql"
	case PostgreSQL:
		return "postgresql"
	case SQLite:
		return "sqlite"
	}
	return "unknown"
}

// Statement is one parsed statement.
type Statement interface{ statement() }

// Select is a query. A nil From means a SELECT without FROM (SELECT 1,
// SELECT @@version_comment).
type Select struct {
	Distinct bool
	Items    []SelectItem
	From     TableExpr
	Where    Expr
	GroupBy  []Expr
	Having   Expr
	OrderBy  []OrderItem
	Limit    *Limit
	// ForUpdate is set for SELECT ... FOR UPDATE / LOCK IN SHARE MODE.
	ForUpdate bool
}

// SetOp is UNION / INTERSECT / EXCEPT of selects.
type SetOp struct {
	Op    string // "union", "union all", "intersect", "except"
	Left  Statement
	Right Statement
	// OrderBy and Limit apply to the result of the whole operation
	// ("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1 LIMIT 5").
	OrderBy []OrderItem
	Limit   *Limit
}

// SelectItem is one output column. Star items are "*" or "t.*".
type SelectItem struct {
	Expr      Expr
	Alias     string
	Star      bool
	StarTable string
	// Text is the item's original SQL text, used as the column name when
	// there is no alias (MySQL names columns that way: "COUNT(*)").
	Text string
	// DefaultName is the name PostgreSQL gives an unaliased column
	// (FigureColname in parse_target.c: "count" for COUNT(*), "?column?"
	// for 1 + 1). Only the PostgreSQL front end sets it; a PostgreSQL
	// client expects it rather than Text.
	DefaultName string
}

// OrderItem is one ORDER BY key.
type OrderItem struct {
	Expr Expr
	Desc bool
	// Nulls is "first" or "last" for an explicit NULLS FIRST / NULLS LAST
	// (PostgreSQL), "" for the dialect's default placement.
	Nulls string
}

// Limit is LIMIT count [OFFSET offset]; either may be nil.
type Limit struct {
	Count  Expr
	Offset Expr
}

// TableExpr is what FROM names.
type TableExpr interface{ tableExpr() }

// TableName is a base table, optionally schema-qualified and aliased.
type TableName struct {
	Schema string
	Name   string
	Alias  string
}

// Join is an explicit or comma join.
type Join struct {
	Kind  string // "inner", "left", "right", "cross", "full"
	Left  TableExpr
	Right TableExpr
	On    Expr
	Using []string
}

// DerivedTable is FROM (SELECT ...) AS alias.
type DerivedTable struct {
	Select Statement
	Alias  string
}

// FuncTable is a set-returning function in FROM (PostgreSQL):
// generate_series(1, 3) AS s(r), unnest(a) x. Columns is the alias's
// column list.
type FuncTable struct {
	Func    *Func
	Alias   string
	Columns []string
}

func (*FuncTable) tableExpr() {}

func (*TableName) tableExpr()    {}
func (*Join) tableExpr()         {}
func (*DerivedTable) tableExpr() {}

// Expr is a scalar or aggregate expression.
type Expr interface{ expr() }

// ColumnRef names a column, optionally qualified by a table or alias.
type ColumnRef struct {
	Schema string
	Table  string
	Name   string
}

// Literal is a constant. Value is one of nil, int64, float64, string, bool.
// Decimal literals ("1.5") are float64 with IsDecimal set, so a renderer can
// keep their exact text in Text.
type Literal struct {
	Value     any
	IsDecimal bool
	Text      string
}

// Param is a placeholder ("?" in MySQL, "$n" in PostgreSQL), 0-based.
type Param struct{ Index int }

// Variable is @@system_var (System) or @user_var.
type Variable struct {
	Name   string // lower case, without @ or @@ and without scope prefix
	System bool
	Scope  string // "", "session", "global", "local"
}

// Op is an operator of a Unary or Binary expression.
type Op string

const (
	OpAdd    Op = "+"
	OpSub    Op = "-"
	OpMul    Op = "*"
	OpDiv    Op = "/"
	OpIntDiv Op = "div"
	OpMod    Op = "%"
	OpEQ     Op = "="
	OpNE     Op = "<>"
	OpLT     Op = "<"
	OpLE     Op = "<="
	OpGT     Op = ">"
	OpGE     Op = ">="
	OpNullEQ Op = "<=>" // MySQL null-safe equality; IS NOT DISTINCT FROM in PostgreSQL
	OpAnd    Op = "and"
	OpOr     Op = "or"
	OpXor    Op = "xor"
	OpNot    Op = "not"
	OpNeg    Op = "neg" // unary minus
	OpBitAnd Op = "&"
	OpBitOr  Op = "|"
	OpConcat Op = "||" // PostgreSQL string concatenation
	OpRegex  Op = "regexp"
	OpIRegex Op = "iregexp" // PostgreSQL ~* (case-insensitive regular expression match)
)

// Unary is NOT x or -x.
type Unary struct {
	Op Op
	X  Expr
}

// Binary is l op r.
type Binary struct {
	Op   Op
	L, R Expr
}

// Func is a function call, including aggregates. Name is lower case and
// unqualified (pg_catalog.version() has Schema "pg_catalog").
type Func struct {
	Schema   string
	Name     string
	Args     []Expr
	Distinct bool
	Star     bool // COUNT(*)
	// WithinGroup holds PERCENTILE_CONT(p) WITHIN GROUP (ORDER BY x).
	WithinGroup []OrderItem
	// Over is set for window functions; the DP path refuses them.
	Over bool
	// Window is the OVER (...) specification when the front end keeps it
	// (PostgreSQL; catalog queries of pgjdbc number columns with
	// row_number() OVER (PARTITION BY ... ORDER BY ...)). Nil otherwise.
	Window *WindowSpec
}

// WindowSpec is the PARTITION BY and ORDER BY of a window function's OVER
// clause. Frame clauses and named windows are refused by the parser.
type WindowSpec struct {
	PartitionBy []Expr
	OrderBy     []OrderItem
}

// When is one WHEN ... THEN ... arm of a CASE.
type When struct {
	Cond   Expr
	Result Expr
}

// Case is CASE [operand] WHEN ... THEN ... [ELSE ...] END.
type Case struct {
	Operand Expr
	Whens   []When
	Else    Expr
}

// Between is x [NOT] BETWEEN lo AND hi.
type Between struct {
	X, Lo, Hi Expr
	Not       bool
}

// In is x [NOT] IN (list) or x [NOT] IN (subquery).
type In struct {
	X    Expr
	List []Expr
	Sub  Statement
	Not  bool
}

// IsNull is x IS [NOT] NULL.
type IsNull struct {
	X   Expr
	Not bool
}

// IsBool is x IS [NOT] TRUE/FALSE.
type IsBool struct {
	X     Expr
	Value bool
	Not   bool
}

// Like is x [NOT] LIKE/ILIKE pattern [ESCAPE e].
type Like struct {
	X, Pattern      Expr
	Escape          Expr
	Not             bool
	CaseInsensitive bool
}

// Cast is CAST(x AS type) or x::type. Type is normalised to one of
// "int", "float", "decimal", "string", "date", "datetime", "bool", or the
// lower-case original name when it is none of those.
type Cast struct {
	X    Expr
	Type string
}

// Subquery is a scalar subquery or EXISTS (subquery).
type Subquery struct {
	Select Statement
	Exists bool
}

// Row is a row constructor (a, b).
type Row struct{ Items []Expr }

// Interval is INTERVAL n unit (date arithmetic).
type Interval struct {
	Value Expr
	Unit  string
}

// Array is the PostgreSQL array constructor ARRAY[a, b, ...].
type Array struct{ Items []Expr }

// ArraySubquery is PostgreSQL's ARRAY(SELECT ...): the subquery's one
// column collected into an array.
type ArraySubquery struct{ Select Statement }

// AnyOp is PostgreSQL's x op ANY (array) or, with All, x op ALL (array).
// "x = ANY (ARRAY[1, 2])" with a literal array is an In instead.
type AnyOp struct {
	Op    Op
	X     Expr
	Array Expr
	All   bool
}

// Subscript is the PostgreSQL array element x[i] (1-based).
type Subscript struct{ X, Index Expr }

// FieldSelect is PostgreSQL's selection of a field of a composite value,
// (x).field.
type FieldSelect struct {
	X     Expr
	Field string
}

func (*Array) expr()         {}
func (*ArraySubquery) expr() {}
func (*AnyOp) expr()         {}
func (*Subscript) expr()     {}
func (*FieldSelect) expr()   {}

func (*ColumnRef) expr() {}
func (*Literal) expr()   {}
func (*Param) expr()     {}
func (*Variable) expr()  {}
func (*Unary) expr()     {}
func (*Binary) expr()    {}
func (*Func) expr()      {}
func (*Case) expr()      {}
func (*Between) expr()   {}
func (*In) expr()        {}
func (*IsNull) expr()    {}
func (*IsBool) expr()    {}
func (*Like) expr()      {}
func (*Cast) expr()      {}
func (*Subquery) expr()  {}
func (*Row) expr()       {}
func (*Interval) expr()  {}

// Scope of a SET assignment.
const (
	ScopeSession = "session"
	ScopeGlobal  = "global"
	ScopeUser    = "user" // @x
)

// Assignment is one name = value of a SET.
type Assignment struct {
	Name  string // lower case
	Scope string
	Value Expr
}

// Set is SET a = 1, b = 2; SET NAMES x (Name "names"); SET x TO y.
type Set struct{ Assignments []Assignment }

// Use is USE db.
type Use struct{ DB string }

// ShowKind is what a SHOW statement asks for.
type ShowKind int

const (
	ShowDatabases ShowKind = iota
	ShowTables
	ShowColumns // also DESCRIBE t / DESC t / SHOW FIELDS
	ShowVariables
	ShowStatus
	ShowWarnings
	ShowErrors
	ShowCollation
	ShowCharset
	ShowCreateTable
	ShowTableStatus
	ShowIndex
	ShowEngines
	ShowProcessList
	ShowGrants
	ShowVariable // PostgreSQL SHOW name (Name holds it)
)

// Show is SHOW ... / DESCRIBE t.
type Show struct {
	Kind   ShowKind
	Full   bool
	Global bool
	Schema string
	Table  string
	Name   string // ShowVariable
	Like   string // LIKE 'pattern'
	Where  Expr
}

// TxKind is the kind of a transaction statement.
type TxKind int

const (
	TxBegin TxKind = iota
	TxCommit
	TxRollback
)

// Transaction is BEGIN / START TRANSACTION / COMMIT / ROLLBACK. The proxy
// accepts them so that drivers work; DP queries are read-only.
type Transaction struct{ Kind TxKind }

// Write is any statement that would change data or schema (INSERT, UPDATE,
// DELETE, REPLACE, CREATE, DROP, ALTER, TRUNCATE, GRANT, LOAD DATA, CALL, ...).
// It is always refused; Verb says which so the error can name it.
type Write struct{ Verb string }

// Explain is EXPLAIN <select> (a plain EXPLAIN; the engine refuses it on
// private tables because a plan reveals row estimates).
type Explain struct{ Stmt Statement }

// Reset is PostgreSQL's RESET name / SET name TO DEFAULT: the setting goes
// back to its default. Name is lower case; RESET ALL has Name "all".
type Reset struct{ Name string }

// Discard is PostgreSQL's DISCARD ALL | PLANS | SEQUENCES | TEMP (What, lower
// case): connection poolers send DISCARD ALL to reset a session.
type Discard struct{ What string }

// Deallocate is PostgreSQL's DEALLOCATE [PREPARE] name | ALL: it drops a
// prepared statement of the session (All: every one).
type Deallocate struct {
	Name string
	All  bool
}

func (*Reset) statement()      {}
func (*Discard) statement()    {}
func (*Deallocate) statement() {}

// Empty is a statement with no content (";" or a lone comment).
type Empty struct{}

func (*Select) statement()      {}
func (*SetOp) statement()       {}
func (*Set) statement()         {}
func (*Use) statement()         {}
func (*Show) statement()        {}
func (*Transaction) statement() {}
func (*Write) statement()       {}
func (*Explain) statement()     {}
func (*Empty) statement()       {}

// --- dpproxy's own statements -------------------------------------------

// ShowPrivacyBudget is SHOW PRIVACY BUDGET [FOR USER u | FOR ROLE r] and
// SHOW PRIVACY BUDGETS (All).
type ShowPrivacyBudget struct {
	User string
	Role string
	All  bool
}

func (*ShowPrivacyBudget) statement() {}

// mysqlMaxColumnName is the length (in characters) at which MariaDB cuts the
// name it gives an unaliased expression.
const mysqlMaxColumnName = 255

// ColumnName is the name the client's own server would give the item's
// result column: its alias; else, from the PostgreSQL front end,
// DefaultName (FigureColname's name); else MariaDB's: the column's name for
// a column reference (unquoted, unqualified), the value of a quoted string
// literal, and the item's text, cut at 255 characters, for anything else.
// Star items have no single name ("").
func (it SelectItem) ColumnName() string {
	switch {
	case it.Star:
		return ""
	case it.Alias != "":
		return it.Alias
	case it.DefaultName != "":
		return it.DefaultName
	}
	switch x := it.Expr.(type) {
	case *ColumnRef:
		return x.Name
	case *Literal:
		// A quoted string ('a', "a", _utf8'a', N'a'), not 0x41 or b'1'.
		if s, ok := x.Value.(string); ok && quotedString(it.Text) {
			return truncateRunes(s, mysqlMaxColumnName)
		}
	}
	return truncateRunes(it.Text, mysqlMaxColumnName)
}

func quotedString(text string) bool {
	if text == "" {
		return false
	}
	switch c := text[0]; {
	case c == '\'' || c == '"':
		return true
	case c == '_':
		return true
	case (c == 'N' || c == 'n') && len(text) > 1 && text[1] == '\'':
		return true
	}
	return false
}

func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
