package parser

import "fmt"

// MaxNesting bounds how deeply a statement may nest expressions, in the
// units of nestingBound below. Every pass over a statement — the TiDB
// parser's own tree walks, libpg_query's protobuf output (C, on the thread's
// stack), the conversion into the model, rewrite, eval and the catalog's
// walkers — recurses once or a few times per level of the tree, and a Go
// stack overflow is fatal to the whole process, not to one connection.
//
// The number is chosen from measurements (go1.26, amd64; an 8 MiB
// debug.SetMaxStack scaled to the default 1 GB limit, under which the
// largest stack a goroutine can reach is 512 MiB):
//
//   - the most stack per level is rewrite.Analyze on nested CASE (about 1 KiB
//     per level: 8 MiB overflows at 8,576 levels) and the MySQL conversion of
//     nested subqueries (730 B per level); every other path on every shape
//     (unary minus, NOT, a+a+..., OR chains, nested calls, parentheses) takes
//     less. The process would die somewhere above 500,000 levels.
//   - time grows faster than the depth: rewrite.Analyze of nested CASE takes
//     28 ms at 1,000 levels, 217 ms at 3,000 and 2.4 s at 10,000.
//   - libpg_query overflows its C stack between 20,000 and 30,000 levels of
//     a chain of operators; PostgreSQL's grammar stops nested CASE at about
//     2,000 levels and nested subqueries decode no deeper than 2,000 (the
//     protobuf decoder's limit), so deeper PostgreSQL text fails anyway.
//   - the deepest statement of the client corpora (psql, pgjdbc, psycopg,
//     SQLAlchemy, BI tools' metadata queries in testdata/ and
//     catalog/pgcatalog/testdata/) bounds at 29 (one of psql's; its model
//     is 13 deep). On random nested expressions and on those corpora the
//     model is at most twice as deep as the bound (TestBoundCoversModel).
//
// 1,000 keeps a goroutine's stack within a few megabytes and the analysis
// within tens of milliseconds, a margin of 100 below a crash and of 30
// above real SQL. It admits an OR of about 500 comparisons (each term
// counts its OR and its =); longer lists belong in IN (...), which is flat.
const MaxNesting = 1000

// errTooDeep is the error for a statement over MaxNesting.
func errTooDeep() error {
	return &UnsupportedError{What: fmt.Sprintf("a statement that nests expressions more than %d levels deep", MaxNesting)}
}

// checkNesting refuses sql when its nesting bound exceeds MaxNesting. It
// reads the text with the dialect's own lexical rules (strings, quoted
// names, comments, dollar quotes) and never recurses, so that it can run
// before anything that does.
func checkNesting(sql string, d Dialect) error {
	var lex nestLexer
	if d == PostgreSQL {
		lex = &pgNestLexer{l: pgLexer{src: sql}}
	} else {
		lex = &mysqlNestLexer{src: sql, afterNumber: -1}
	}
	if nestingBound(lex, MaxNesting) > MaxNesting {
		return errTooDeep()
	}
	return nil
}

// nestingBound returns an upper bound of how deeply the statement nests, in
// levels of a tree whose nodes are the bracketed groups and the operators:
// every node of a parse tree on a path from its root is made by a bracket
// ('(', '[', '{', CASE ... END) or by an operator token (+, -, NOT, AND,
// OR, IS, LIKE, BETWEEN, COLLATE, ::, ...) of the text, each by its own token, and a
// token makes at most a few nodes. It stops counting, and returns more than
// limit, as soon as the bound passes limit.
//
// Within one group the operators split into segments, at commas (the
// elements of a list are siblings in the tree: IN (1, 2, ...), a select
// list, the arguments of a call) and at WHEN, THEN and ELSE of a CASE (each
// condition and result is its own subtree). A segment's subtree is no
// deeper than its operators plus its deepest nested group, so
//
//	depth(group) = 1 + chain + max over segments (operators + deepest nested group)
//
// where chain counts what can chain across segments: UNION, INTERSECT,
// EXCEPT and JOIN (set operations and joins are left-deep trees), commas
// between tables after FROM (TiDB nests t1, t2, t3 as joins), and the whole
// depth of each derived table and CTE body (rewrite inlines them into the
// expressions that read them, so their depths add up). The bound is the
// top level's depth. A flat list of any length costs nothing: IN with
// 100,000 values, a thousand select items or a CASE of 10,000 branches all
// bound at 2 or 3; a chain of n operators costs n, as its tree is n deep.
//
// Where the lexical reading is ambiguous the bound errs upwards: a word that
// could be a keyword or a name counts as an operator, and only a keyword that
// cannot be a name (not after a '.', not glued to a number) ends a segment,
// opens or closes a CASE, or ends a FROM list.
func nestingBound(lex nestLexer, limit int) int {
	b := nestBounder{limit: limit}
	b.push(nestLevel{}) // the statement
	for {
		t := lex.next()
		if t.kind == nkEOF {
			break
		}
		b.token(t)
		if b.open > limit || b.over {
			return limit + 1
		}
		b.prev = t
	}
	for len(b.stack) > 1 {
		b.pop()
	}
	d := b.stack[0].depth()
	if b.over {
		return limit + 1
	}
	return d
}

// nestLevel is one open group: the statement itself, a parenthesis or
// bracket, or a CASE.
type nestLevel struct {
	isCase   bool
	isParen  bool
	derived  bool // a derived table or a CTE body: its depth adds to its parent's
	fromMode bool // in a list of tables, where commas are joins
	chain    int  // operators that chain across segments, and derived tables' depths
	best     int  // the deepest closed segment
	seg      int  // operators in the current segment
	child    int  // the deepest group nested in the current segment
}

func (l *nestLevel) depth() int { return 1 + l.chain + max(l.best, l.seg+l.child) }

type nestBounder struct {
	stack []nestLevel
	limit int
	// open is Σ over open groups of 1 + chain + seg: a lower bound of the
	// final bound, which keeps the stack no longer than limit.
	open int
	over bool
	prev nestTok
}

func (b *nestBounder) top() *nestLevel { return &b.stack[len(b.stack)-1] }

func (b *nestBounder) push(l nestLevel) {
	b.stack = append(b.stack, l)
	b.open += 1 + l.chain + l.seg
}

// pop closes the innermost group and hands its depth to its parent.
func (b *nestBounder) pop() {
	l := b.stack[len(b.stack)-1]
	b.stack = b.stack[:len(b.stack)-1]
	b.open -= 1 + l.chain + l.seg
	d := l.depth()
	if d > b.limit {
		b.over = true
	}
	p := b.top()
	if l.derived {
		p.chain += d
		b.open += d
	} else {
		p.child = max(p.child, d)
	}
	if p.depth() > b.limit {
		b.over = true
	}
}

// endSegment closes the current segment of the innermost group.
func (b *nestBounder) endSegment() {
	l := b.top()
	l.best = max(l.best, l.seg+l.child)
	b.open -= l.seg
	l.seg, l.child = 0, 0
}

func (b *nestBounder) operator() {
	b.top().seg++
	b.open++
}

func (b *nestBounder) chainOp() {
	b.top().chain++
	b.open++
}

// tablePosition reports whether a group opened now, in a FROM list, is a
// table: right after FROM, JOIN, USING, LATERAL, a comma or an opening
// parenthesis that was itself a table.
func (b *nestBounder) tablePosition() bool {
	if !b.top().fromMode {
		return false
	}
	switch b.prev.kind {
	case nkComma, nkOpen:
		return true
	case nkWord:
		return b.prev.kw == kwFrom || b.prev.kw == kwFromLike || b.prev.kw == kwJoin || b.prev.kw == kwLateral
	}
	return false
}

func (b *nestBounder) token(t nestTok) {
	switch t.kind {
	case nkOpen:
		table := b.tablePosition()
		afterAs := b.prev.kind == nkWord && b.prev.kw == kwAs
		b.push(nestLevel{isParen: true, fromMode: table, derived: table || afterAs})
	case nkClose:
		// Close up to and including the innermost parenthesis; a CASE
		// left open inside it ends with it. A stray one closes nothing.
		for i := len(b.stack) - 1; i > 0; i-- {
			if b.stack[i].isParen {
				for len(b.stack) > i {
					b.pop()
				}
				return
			}
		}
	case nkComma:
		if b.top().fromMode {
			b.chainOp() // t1, t2: a join
		} else {
			b.endSegment()
		}
	case nkSemi:
		if len(b.stack) == 1 {
			b.endSegment() // the next statement is its own tree
		}
	case nkOp:
		b.operator()
	case nkWord:
		b.word(t)
	}
}

func (b *nestBounder) word(t nestTok) {
	// A keyword that could also be a name (after a '.', before one, glued
	// to a number) may only add to the bound.
	strict := !t.glued && !t.dotNext && b.prev.kind != nkDot
	switch t.kw {
	case kwOp:
		b.operator()
	case kwJoin, kwChain:
		b.chainOp()
		if t.kw == kwChain && strict {
			b.top().fromMode = false
		}
	case kwFrom:
		if !(b.prev.kind == nkWord && b.prev.kw == kwDistinct) { // IS DISTINCT FROM
			b.top().fromMode = true
		}
	case kwFromLike:
		b.top().fromMode = true
	case kwFromEnd:
		if strict {
			b.top().fromMode = false
		}
	case kwCase:
		if strict {
			b.push(nestLevel{isCase: true})
		} else {
			b.operator()
		}
	case kwWhen, kwThen, kwElse:
		if strict && b.top().isCase {
			b.endSegment()
		}
	case kwEnd:
		// END closes a CASE only where a CASE can end: after an operand.
		// Elsewhere it is a name (MySQL does not reserve END).
		if strict && b.top().isCase && b.prev.endsOperand() {
			b.pop()
		}
	}
}

// nestKind is a token's role for the bound.
type nestKind uint8

const (
	nkEOF     nestKind = iota
	nkOperand          // a literal, quoted name, parameter or variable
	nkWord             // an unquoted word: a name or a keyword
	nkOpen             // ( [ {
	nkClose            // ) ] }
	nkComma
	nkSemi
	nkDot
	nkOp // any other punctuation: an operator
)

type nestKeyword uint8

const (
	kwNone     nestKeyword = iota
	kwOp                   // AND, OR, NOT, IS, LIKE, ...: a node of the tree
	kwChain                // UNION, INTERSECT, EXCEPT: a chain across select lists
	kwJoin                 // JOIN, STRAIGHT_JOIN
	kwFrom                 // FROM: a list of tables follows
	kwFromLike             // UPDATE, USING: so does a list of tables
	kwFromEnd              // WHERE, GROUP, ...: the list of tables has ended
	kwLateral              // LATERAL (
	kwAs                   // AS ( of a CTE
	kwDistinct             // DISTINCT FROM is not a FROM list
	kwCase
	kwWhen
	kwThen
	kwElse
	kwEnd
)

// nestKeywords are the words that matter to the bound, in both dialects.
// The operators are those of the two grammars' precedence tables
// (PostgreSQL's gram.y, TiDB's parser.y) that make a node of their own.
var nestKeywords = map[string]nestKeyword{
	"AND": kwOp, "OR": kwOp, "XOR": kwOp, "NOT": kwOp, "IS": kwOp, "ISNULL": kwOp, "NOTNULL": kwOp,
	"LIKE": kwOp, "ILIKE": kwOp, "RLIKE": kwOp, "REGEXP": kwOp, "SIMILAR": kwOp, "SOUNDS": kwOp,
	"BETWEEN": kwOp, "IN": kwOp, "DIV": kwOp, "MOD": kwOp, "COLLATE": kwOp, "AT": kwOp,
	"OPERATOR": kwOp, "INTERVAL": kwOp, "BINARY": kwOp, "ESCAPE": kwOp, "MEMBER": kwOp,
	"EXISTS": kwOp, "ANY": kwOp, "ALL": kwOp, "SOME": kwOp, "OVERLAPS": kwOp, "UNIQUE": kwOp,
	"UNION": kwChain, "INTERSECT": kwChain, "EXCEPT": kwChain,
	"JOIN": kwJoin, "STRAIGHT_JOIN": kwJoin,
	"FROM": kwFrom, "UPDATE": kwFromLike, "USING": kwFromLike,
	"WHERE": kwFromEnd, "GROUP": kwFromEnd, "HAVING": kwFromEnd, "ORDER": kwFromEnd,
	"LIMIT": kwFromEnd, "WINDOW": kwFromEnd, "INTO": kwFromEnd, "SELECT": kwFromEnd,
	"SET": kwFromEnd, "VALUES": kwFromEnd, "RETURNING": kwFromEnd,
	"LATERAL": kwLateral, "AS": kwAs, "MATERIALIZED": kwAs, "DISTINCT": kwDistinct,
	"CASE": kwCase, "WHEN": kwWhen, "THEN": kwThen, "ELSE": kwElse, "END": kwEnd,
}

// maxNestKeyword is the length of the longest word in nestKeywords.
const maxNestKeyword = len("STRAIGHT_JOIN")

// lookupNestKeyword classifies an unquoted word, in any case.
func lookupNestKeyword(w string) nestKeyword {
	if len(w) > maxNestKeyword {
		return kwNone
	}
	var buf [maxNestKeyword]byte
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		buf[i] = c
	}
	return nestKeywords[string(buf[:len(w)])]
}

// nestTok is one token as the bound sees it.
type nestTok struct {
	kind nestKind
	kw   nestKeyword // of a word
	// glued: the word follows a number with nothing between them, where
	// the two lexers may cut differently; dotNext: a '.' follows at once.
	glued, dotNext bool
}

// endsOperand reports whether an expression can end with t, so that END
// after it closes a CASE.
func (t nestTok) endsOperand() bool {
	switch t.kind {
	case nkOperand, nkClose:
		return true
	case nkWord:
		switch t.kw {
		case kwOp, kwChain, kwJoin, kwCase, kwWhen, kwThen, kwElse, kwFrom, kwFromLike, kwFromEnd, kwAs, kwLateral, kwDistinct:
			return false
		}
		return true
	}
	return false
}

type nestLexer interface{ next() nestTok }

// pgNestLexer reads PostgreSQL with pgLexer, which follows scan.l.
type pgNestLexer struct{ l pgLexer }

func (p *pgNestLexer) next() nestTok {
	t := p.l.next()
	src := p.l.src
	switch t.kind {
	case pgTokEOF:
		return nestTok{kind: nkEOF}
	case pgTokWord:
		// A word cannot follow a number without a blank in PostgreSQL 17:
		// its scanner rejects "trailing junk after numeric literal".
		return nestTok{kind: nkWord, kw: lookupNestKeyword(src[t.start:t.end]),
			dotNext: t.end < len(src) && src[t.end] == '.'}
	case pgTokPunct:
		return nestTok{kind: punctKind(src[t.start], false)}
	}
	return nestTok{kind: nkOperand}
}

// punctKind classifies one character of punctuation. For MySQL '?' is a
// placeholder; for PostgreSQL it is an operator character.
func punctKind(c byte, mysql bool) nestKind {
	switch c {
	case '(', '[', '{':
		return nkOpen
	case ')', ']', '}':
		return nkClose
	case ',':
		return nkComma
	case ';':
		return nkSemi
	case '.':
		return nkDot
	case '?':
		if mysql {
			return nkOperand
		}
	}
	return nkOp
}
