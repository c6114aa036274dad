package parser

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	pgquery "github.com/pganalyze/pg_query_go/v6"
)

func bound(sql string, d Dialect) int {
	var lex nestLexer
	if d == PostgreSQL {
		lex = &pgNestLexer{l: pgLexer{src: sql}}
	} else {
		lex = &mysqlNestLexer{src: sql, afterNumber: -1}
	}
	return nestingBound(lex, 1<<30)
}

var dialects = []Dialect{MySQL, PostgreSQL}

// deepStatements are the statements of issue 11 that crashed the process
// or burnt minutes of CPU, per dialect ("--" starts a comment in
// PostgreSQL, so its minus signs are apart).
func deepStatements(d Dialect) map[string]string {
	minus := strings.Repeat("-", 3_000_000)
	if d == PostgreSQL {
		minus = strings.Repeat("- ", 3_000_000)
	}
	return map[string]string{
		"3,000,000 minus signs":   "SELECT " + minus + "1",
		"100,000 nested CASE":     "SELECT " + strings.Repeat("CASE WHEN a > 1 THEN ", 100_000) + "1" + strings.Repeat(" ELSE 0 END", 100_000),
		"1,000,000-term sum":      "SELECT 1" + strings.Repeat("+1", 1_000_000),
		"100,000 parentheses":     "SELECT " + strings.Repeat("(", 100_000) + "1" + strings.Repeat(")", 100_000),
		"100,000 NOT":             "SELECT " + strings.Repeat("NOT ", 100_000) + "1",
		"100,000 nested calls":    "SELECT " + strings.Repeat("ABS(", 100_000) + "1" + strings.Repeat(")", 100_000),
		"50,000 nested subquery":  "SELECT " + strings.Repeat("(SELECT ", 50_000) + "1" + strings.Repeat(")", 50_000),
		"100,000-term OR":         "SELECT COUNT(*) FROM t WHERE a = 0" + strings.Repeat(" OR a = 1", 100_000),
		"20,000 UNION":            "SELECT 1" + strings.Repeat(" UNION SELECT 1", 20_000),
		"20,000 JOIN":             "SELECT COUNT(*) FROM t" + strings.Repeat(" JOIN t USING (a)", 20_000),
		"20,000 comma joins":      "SELECT COUNT(*) FROM t" + strings.Repeat(", t", 20_000),
		"5,000 nested derived":    "SELECT a FROM " + strings.Repeat("(SELECT a FROM ", 5_000) + "t" + strings.Repeat(") d", 5_000),
		"EXPLAIN PRIVACY of deep": "EXPLAIN PRIVACY SELECT " + strings.Repeat("NOT ", 100_000) + "1",
		"TRAIN ON deep":           "TRAIN PRIVATE LOGREG m ON (SELECT a FROM t WHERE " + strings.Repeat("NOT ", 100_000) + "1) LABEL b = 1",
		"TRAIN LABEL deep":        "TRAIN PRIVATE LOGREG m ON (SELECT a FROM t) LABEL " + strings.Repeat("NOT ", 100_000) + "b",
		"deep second statement":   "SELECT 1; SELECT " + strings.Repeat("NOT ", 100_000) + "1",
	}
}

// TestDeepStatementsRefused: every statement of issue 11 is refused before a
// parser sees it, quickly, with the nesting error, on both dialects.
func TestDeepStatementsRefused(t *testing.T) {
	for _, d := range dialects {
		for name, sql := range deepStatements(d) {
			start := time.Now()
			stmt, _, err := Parse(sql, d)
			took := time.Since(start)
			var u *UnsupportedError
			if !errors.As(err, &u) || !strings.Contains(err.Error(), fmt.Sprintf("nests expressions more than %d levels deep", MaxNesting)) {
				t.Errorf("%s, %s: Parse = %T, %v; want the nesting error", d, name, stmt, err)
			}
			if took > 2*time.Second {
				t.Errorf("%s, %s: refused after %v", d, name, took)
			}
		}
	}
}

// TestFlatStatementsAccepted: long flat lists are not deep, however long.
func TestFlatStatementsAccepted(t *testing.T) {
	nums := make([]string, 100_000)
	for i := range nums {
		nums[i] = strconv.Itoa(i - 50_000)
	}
	cols := make([]string, 1000)
	for i := range cols {
		cols[i] = fmt.Sprintf("SUM(CASE WHEN c%d > 0 THEN c%d * 2 ELSE -1 END) AS s%d", i, i, i)
	}
	var flatCase strings.Builder
	flatCase.WriteString("SELECT CASE")
	for i := range 10_000 {
		fmt.Fprintf(&flatCase, " WHEN a = %d AND b <> 'x%d' THEN 'v%d'", i, i, i)
	}
	flatCase.WriteString(" ELSE NULL END AS k, COUNT(*) FROM t GROUP BY 1")
	var simpleCase strings.Builder
	simpleCase.WriteString("SELECT CASE a")
	for i := range 10_000 {
		fmt.Fprintf(&simpleCase, " WHEN %d THEN %d", i, -i)
	}
	simpleCase.WriteString(" END FROM t")
	shapes := map[string]string{
		"IN of 100,000":      "SELECT COUNT(*) FROM t WHERE a IN (" + strings.Join(nums, ",") + ")",
		"NOT IN of 100,000":  "SELECT COUNT(*) FROM t WHERE a NOT IN (" + strings.Join(nums, ", ") + ")",
		"1,000 select items": "SELECT " + strings.Join(cols, ", ") + " FROM t",
		"flat CASE (10,000)": flatCase.String(),
		"CASE a WHEN ...":    simpleCase.String(),
		"long string":        "SELECT COUNT(*) FROM t WHERE a = '" + strings.Repeat("- ( NOT CASE ", 50_000) + "'",
		"long comment":       "SELECT COUNT(*) /* " + strings.Repeat("((((- NOT ", 50_000) + " */ FROM t",
		"long line comment":  "SELECT COUNT(*) -- " + strings.Repeat("((((- NOT ", 50_000) + "\nFROM t",
		"2,000 GROUP BY":     "SELECT COUNT(*) FROM t GROUP BY " + strings.Join(cols[:1000], ", "),
		"VALUES of 10,000":   "SELECT COUNT(*) FROM t WHERE (a, b) IN (" + strings.Repeat("(1, -2), ", 9_999) + "(3, 4))",
	}
	for _, d := range dialects {
		// Deep, but under the limit: a chain of OR is a deep tree, and
		// the bound counts both the OR and the = of each term.
		n := MaxNesting/2 - 10
		or := "SELECT COUNT(*) FROM t WHERE a = 0" + strings.Repeat(" OR a = 1", n) + " OR b IN (1, 2)"
		if _, _, err := Parse(or, d); err != nil {
			t.Errorf("%s, %d-term OR: %v", d, n, err)
		}
		for name, sql := range shapes {
			if b := bound(sql, d); b > 10 {
				t.Errorf("%s, %s: bound %d, want a small one", d, name, b)
			}
			if _, _, err := Parse(sql, d); err != nil && strings.Contains(err.Error(), "levels deep") {
				t.Errorf("%s, %s: %v", d, name, err)
			}
		}
	}
}

// TestNestingLimitEdge: the limit is where it says it is, and both sides of
// it parse as they should.
func TestNestingLimitEdge(t *testing.T) {
	for _, d := range dialects {
		// SELECT NOT ... 1: the statement, n operators.
		under := "SELECT " + strings.Repeat("NOT ", MaxNesting-1) + "1"
		over := "SELECT " + strings.Repeat("NOT ", MaxNesting) + "1"
		if b := bound(under, d); b != MaxNesting {
			t.Errorf("%s: bound of %d NOT = %d", d, MaxNesting-1, b)
		}
		if _, _, err := Parse(under, d); err != nil {
			t.Errorf("%s: %d NOT: %v", d, MaxNesting-1, err)
		}
		if _, _, err := Parse(over, d); err == nil || !strings.Contains(err.Error(), "levels deep") {
			t.Errorf("%s: %d NOT: %v, want the nesting error", d, MaxNesting, err)
		}
	}
}

// TestAtTheLimit: every deep shape just under the limit parses, or fails
// with an error, in both dialects, quickly: no parser, conversion or walk
// overflows a stack on it (an overflow would kill the test binary).
func TestAtTheLimit(t *testing.T) {
	n := MaxNesting - 2
	shapes := map[string]string{
		"minus":      "SELECT " + strings.Repeat("- ", n) + "1",
		"NOT":        "SELECT " + strings.Repeat("NOT ", n) + "1",
		"sum":        "SELECT 1" + strings.Repeat(" + 1", n),
		"parens":     "SELECT " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n),
		"calls":      "SELECT " + strings.Repeat("ABS(", n) + "1" + strings.Repeat(")", n),
		"CASE":       "SELECT " + strings.Repeat("CASE WHEN a THEN ", n) + "1" + strings.Repeat(" END", n),
		"subqueries": "SELECT " + strings.Repeat("(SELECT ", n) + "1" + strings.Repeat(")", n),
		"derived":    "SELECT a FROM " + strings.Repeat("(SELECT a FROM ", n/2) + "t" + strings.Repeat(") d", n/2),
		"UNION":      "SELECT 1" + strings.Repeat(" UNION SELECT 1", n),
		"JOIN":       "SELECT a FROM t" + strings.Repeat(" CROSS JOIN t", n),
		"casts":      "SELECT 1" + strings.Repeat("::int", n/2),
		"subscripts": "SELECT a" + strings.Repeat("[1]", n),
		"IS TRUE":    "SELECT a" + strings.Repeat(" IS TRUE", n),
		"COLLATE":    "SELECT a" + strings.Repeat(" COLLATE \"C\"", n),
		"IN":         "SELECT a" + strings.Repeat(" IN (1)", n),
	}
	for _, d := range dialects {
		for name, sql := range shapes {
			if b := bound(sql, d); b > MaxNesting {
				t.Errorf("%s, %s: bound %d", d, name, b)
				continue
			}
			start := time.Now()
			stmt, _, err := Parse(sql, d)
			if err == nil {
				_ = Fingerprint(sql, d)
				if md := modelDepth(reflect.ValueOf(stmt)); md > boundFactor*MaxNesting {
					t.Errorf("%s, %s: model %d deep", d, name, md)
				}
			}
			if took := time.Since(start); took > time.Second {
				t.Errorf("%s, %s: %v", d, name, took)
			}
		}
	}
}

// TestNestingLexing: text that only looks deep, and text that is deep in
// places a careless lexer would skip.
func TestNestingLexing(t *testing.T) {
	deep := strings.Repeat("NOT ", 2*MaxNesting) + "1"
	cases := []struct {
		d       Dialect
		sql     string
		refused bool
	}{
		// Strings, names and comments hide what they hold...
		{MySQL, "SELECT 'it''s \\' " + deep + "'", false},
		{MySQL, "SELECT \"" + deep + "\"", false},
		{MySQL, "SELECT `" + deep + "`", false},
		{MySQL, "SELECT 1 # " + deep, false},
		{MySQL, "SELECT 1 -- " + deep, false},
		{MySQL, "SELECT 1 /* " + deep + " */", false},
		{MySQL, "SELECT 1 /*T![unknown_feature] " + deep + " */", false},
		{MySQL, "SELECT @'" + deep + "'", false},
		{PostgreSQL, "SELECT 'it''s \\' , 1", false},
		{PostgreSQL, "SELECT $q$ " + deep + " $q$", false},
		{PostgreSQL, "SELECT E'\\' " + deep + "'", false},
		{PostgreSQL, "SELECT \"" + deep + "\"", false},
		{PostgreSQL, "SELECT 1 /* /* nested */ " + deep + " */", false},
		{PostgreSQL, "SELECT 1 --" + deep, false},
		// ...but not what follows them.
		{MySQL, "SELECT 'it''s \\' ', " + deep, true},
		{MySQL, "SELECT 1 --" + deep, true}, // no blank: two minus signs
		{MySQL, "SELECT 1 /*! " + deep + " */", true},
		{MySQL, "SELECT 1 /*!40101 " + deep + " */", true},
		{MySQL, "SELECT 1 /*T! " + deep + " */", true},
		{MySQL, "SELECT 1 /**/ " + deep, true},
		{MySQL, "SELECT @@(" + strings.Repeat("@@(", MaxNesting) + "1", true},
		{MySQL, "SELECT 1" + strings.Repeat("e1AND 1", MaxNesting+1), true},
		{PostgreSQL, "SELECT 'it''s \\', " + deep, true},
		{PostgreSQL, "SELECT 1 /* /* */ */ " + deep, true},
		{PostgreSQL, "SELECT $1 " + deep, true},
		// A name that is a keyword elsewhere does not end a CASE or a
		// segment: t.end, t.then.
		{MySQL, "SELECT CASE WHEN a THEN t.end " + strings.Repeat("+ 1 ", MaxNesting) + " END", true},
		{MySQL, "SELECT CASE WHEN a THEN t.then " + strings.Repeat("+ 1 ", MaxNesting) + " END", true},
		{PostgreSQL, "SELECT CASE WHEN a THEN t.end " + strings.Repeat("+ 1 ", MaxNesting) + " END", true},
		// MySQL does not reserve END: a column named end is an operand.
		{MySQL, "SELECT CASE WHEN end THEN " + deep + " END", true},
		{MySQL, "SELECT CASE WHEN a THEN end END + " + strings.Repeat("1 + ", 10) + "1", false},
	}
	for _, c := range cases {
		_, _, err := Parse(c.sql, c.d)
		gotRefused := err != nil && strings.Contains(err.Error(), "levels deep")
		if gotRefused != c.refused {
			t.Errorf("%s: Parse(%.80q...) = %v, refused %v", c.d, c.sql, err, c.refused)
		}
	}
}

// modelDepth is the depth of a parsed statement: the longest chain of
// model nodes (pointers to structs) from the root.
func modelDepth(v reflect.Value) int {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		if v.Kind() == reflect.Pointer {
			return 1 + modelDepth(v.Elem())
		}
		return modelDepth(v.Elem())
	case reflect.Struct:
		d := 0
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				d = max(d, modelDepth(v.Field(i)))
			}
		}
		return d
	case reflect.Slice, reflect.Array:
		d := 0
		for i := 0; i < v.Len(); i++ {
			d = max(d, modelDepth(v.Index(i)))
		}
		return d
	case reflect.Map:
		d := 0
		for it := v.MapRange(); it.Next(); {
			d = max(d, modelDepth(it.Value()))
		}
		return d
	}
	return 0
}

// parseTreeDepth is the depth of the dialect parser's own tree, in
// pointers: TiDB's AST, or pg_query's protobuf tree (where every node is a
// Node wrapping its message).
func parseTreeDepth(t testing.TB, sql string, d Dialect) int {
	if d == PostgreSQL {
		tree, err := pgquery.Parse(sql)
		if err != nil {
			t.Fatalf("pg_query rejects what Parse accepted: %q: %v", sql, err)
		}
		return pointerDepth(reflect.ValueOf(tree))
	}
	stmts, _, err := newMySQLParser().ParseSQL(sql)
	if err != nil {
		t.Fatalf("TiDB rejects what Parse accepted: %q: %v", sql, err)
	}
	return pointerDepth(reflect.ValueOf(stmts))
}

// pointerDepth is the longest chain of pointers from v through exported
// fields (parse trees have no cycles through them).
func pointerDepth(v reflect.Value) int {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		return pointerDepth(v.Elem())
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		return 1 + pointerDepth(v.Elem())
	case reflect.Struct:
		d := 0
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				d = max(d, pointerDepth(v.Field(i)))
			}
		}
		return d
	case reflect.Slice, reflect.Array:
		d := 0
		for i := 0; i < v.Len(); i++ {
			d = max(d, pointerDepth(v.Index(i)))
		}
		return d
	}
	return 0
}

// boundFactor is how many model levels one unit of the bound may become: a
// subquery is a Subquery, a Select and an item's expression. Measured: 2.
const boundFactor = 4

// treeFactor is the same for the dialect parsers' own trees, in pointers.
// Measured: TiDB's AST 4 plus a constant; pg_query's protobuf tree 9 (every
// node is a Node wrapping its message: a nested subquery is Node, SubLink,
// Node, SelectStmt, Node, ResTarget, Node, ...).
var treeFactor = map[Dialect]int{MySQL: 4, PostgreSQL: 10}

// maxRatio is the largest model depth / bound seen, for the log.
var maxRatio float64

// checkBoundCovers asserts that the model of sql is no deeper than the
// bound allows.
func checkBoundCovers(t testing.TB, sql string, d Dialect) {
	t.Helper()
	stmt, _, err := Parse(sql, d)
	if err != nil {
		return
	}
	md, b := modelDepth(reflect.ValueOf(stmt)), bound(sql, d)
	if md > boundFactor*b {
		t.Errorf("%s: model depth %d > %d × bound %d: %q", d, md, boundFactor, b, sql)
	}
	if isDPStatement(sql) {
		return // dpproxy's grammar builds the model itself
	}
	factor := treeFactor[d]
	if rd := parseTreeDepth(t, sql, d); rd > factor*b+16 {
		t.Errorf("%s: parse tree depth %d > %d × bound %d + 16: %q", d, rd, factor, b, sql)
	}
	if r := float64(md) / float64(b); r > maxRatio {
		maxRatio = r
	}
}

// randomExpr builds a random expression of the shapes that nest.
func randomExpr(r *rand.Rand, depth int, d Dialect) string {
	if depth == 0 || r.IntN(6) == 0 {
		return []string{"a", "1", "'x'", "t.b", "NULL", "2.5e-3", "-1"}[r.IntN(7)]
	}
	x := func() string { return randomExpr(r, depth-1, d) }
	switch r.IntN(16) {
	case 0:
		return x() + " + " + x()
	case 1:
		return "-" + " " + x()
	case 2:
		return "NOT " + x()
	case 3:
		return "(" + x() + ")"
	case 4:
		return "CASE WHEN " + x() + " THEN " + x() + " ELSE " + x() + " END"
	case 5:
		return "CASE " + x() + " WHEN 1 THEN " + x() + " END"
	case 6:
		return "ABS(" + x() + ")"
	case 7:
		return "COALESCE(" + x() + ", " + x() + ", " + x() + ")"
	case 8:
		return x() + " IN (1, 2, " + x() + ")"
	case 9:
		return x() + " BETWEEN " + x() + " AND " + x()
	case 10:
		return x() + " IS NOT NULL"
	case 11:
		return "(SELECT " + x() + " FROM t WHERE " + x() + ")"
	case 12:
		return x() + " OR " + x() + " AND " + x()
	case 13:
		return "CAST(" + x() + " AS CHAR)"
	case 14:
		return x() + " LIKE " + x()
	}
	return "EXISTS (SELECT 1 FROM (SELECT " + x() + " AS c FROM t) d WHERE " + x() + ")"
}

// TestBoundCoversModel: on random nested expressions and on the corpora,
// the model is never deeper than boundFactor × the bound.
func TestBoundCoversModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		d := dialects[i%2]
		e := randomExpr(r, 12, d)
		checkBoundCovers(t, "SELECT "+e+", "+randomExpr(r, 4, d)+" FROM t WHERE "+randomExpr(r, 8, d), d)
	}
	for _, sql := range corpusStatements(t) {
		checkBoundCovers(t, sql.sql, sql.d)
	}
	for _, d := range dialects {
		for _, sql := range []string{
			"SELECT 1" + strings.Repeat(" UNION SELECT 1", 200),
			"SELECT COUNT(*) FROM t" + strings.Repeat(" JOIN t USING (a)", 200),
			"SELECT COUNT(*) FROM t" + strings.Repeat(", t", 200),
			"SELECT COUNT(*) FROM (" + strings.Repeat("(t, ", 100) + "t" + strings.Repeat(")", 100) + ")",
			"SELECT " + strings.Repeat("CASE WHEN a THEN ", 200) + "1" + strings.Repeat(" END", 200),
			"SELECT " + strings.Repeat("(SELECT ", 100) + "1" + strings.Repeat(")", 100),
		} {
			checkBoundCovers(t, sql, d)
		}
	}
	t.Logf("largest model depth / bound: %.2f", maxRatio)
}

type corpusStatement struct {
	d    Dialect
	name string
	sql  string
}

// corpusStatements returns the real clients' SQL in the repository: the
// PostgreSQL clients' statements here and in catalog/pgcatalog.
func corpusStatements(t testing.TB) []corpusStatement {
	var out []corpusStatement
	clients, queries := pgClientQueries(t)
	for i, q := range queries {
		out = append(out, corpusStatement{PostgreSQL, clients[i], q})
	}
	files, err := filepath.Glob("../catalog/pgcatalog/testdata/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no catalog corpus: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range strings.Split(string(data), "-- query: ")[1:] {
			name, sql, _ := strings.Cut(b, "\n")
			out = append(out, corpusStatement{PostgreSQL, filepath.Base(f) + ":" + name, strings.TrimSpace(sql)})
		}
	}
	return out
}

// TestCorpusFarBelowLimit: the deepest real client statement is far below
// MaxNesting (see its comment for the margin).
func TestCorpusFarBelowLimit(t *testing.T) {
	deepest, which := 0, ""
	for _, s := range corpusStatements(t) {
		if b := bound(s.sql, s.d); b > deepest {
			deepest, which = b, s.name
		}
	}
	t.Logf("deepest client statement: %s, bound %d", which, deepest)
	if deepest*20 > MaxNesting {
		t.Errorf("%s bounds at %d: within a factor 20 of MaxNesting", which, deepest)
	}
}

// TestParseTimeBounded: a statement of 1 MiB parses (or fails) in bounded
// time whatever its shape.
func TestParseTimeBounded(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("parses several MiB, timed")
	}
	const size = 1 << 20
	fill := func(prefix, unit, suffix string) string {
		n := (size - len(prefix) - len(suffix)) / len(unit)
		return prefix + strings.Repeat(unit, n) + suffix
	}
	shapes := map[string]string{
		"IN list":         fill("SELECT COUNT(*) FROM t WHERE a IN (0", ", 12345", ")"),
		"select items":    fill("SELECT 1", ", a + 1", " FROM t"),
		"flat CASE":       fill("SELECT CASE", " WHEN a = 1 THEN 'v'", " END FROM t"),
		"string":          fill("SELECT '", "abcd", "'"),
		"comment":         fill("SELECT 1 /*", "abcd", "*/"),
		"minus signs":     fill("SELECT ", "- ", "1"),
		"parentheses":     fill("SELECT ", "(", "1"),
		"CASE":            fill("SELECT ", "CASE WHEN a THEN ", "1"),
		"bare words":      fill("SELECT ", "a ", ""),
		"commas":          fill("SELECT a", ",", ""),
		"many statements": fill("", "SELECT 1;", ""),
		"EXPLAIN PRIVACY": fill("", "EXPLAIN PRIVACY ", "SELECT 1"),
		"TRAIN ON":        fill("", "TRAIN PRIVATE LOGREG m ON (", "SELECT 1"),
		"label":           fill("TRAIN PRIVATE LOGREG m ON (SELECT a FROM t) LABEL 1", " + 1", ""),
		"label parens":    fill("TRAIN PRIVATE LOGREG m ON (SELECT a FROM t) LABEL a IN (1", ", 1", ")"),
		"options":         fill("TRAIN PRIVATE LOGREG m ON (SELECT a FROM t) LABEL a = 1 WITH (epsilon = 1", ", x = 1", ")"),
	}
	for _, d := range dialects {
		for name, sql := range shapes {
			start := time.Now()
			_, _, err := Parse(sql, d)
			took := time.Since(start)
			// Reported, not asserted: times are measured, never a test's
			// pass/fail (the race detector alone makes them 5-10× slower).
			t.Logf("%s, %s (%d bytes): %v (%.60v)", d, name, len(sql), took, err)
			if err == nil {
				// The proxy fingerprints what parses.
				start = time.Now()
				_ = Fingerprint(sql, d)
				t.Logf("%s, %s: fingerprint %v", d, name, time.Since(start))
			}
		}
	}
}
