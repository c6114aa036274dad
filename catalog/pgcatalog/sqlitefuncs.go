package pgcatalog

import (
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"modernc.org/sqlite"
)

// registerFunctions installs the PostgreSQL functions that need Go on the
// package's own SQLite driver. Every one is a pure function of its
// arguments; what depends on the catalog's rows or the session is rendered
// as SQL or literals instead (funcs.go). Their names carry a pgcat_ prefix
// so that no client-written name can reach them: the renderer maps the
// allow-listed PostgreSQL names to them.
func registerFunctions(d *sqlite.Driver) {
	// Not deterministic: it must run once per row even when the row's
	// values are constants.
	d.MustRegisterScalarFunction("pgcat_collect", -1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		return collect(args)
	})
	det := func(name string, n int32, f func(args []driver.Value) (driver.Value, error)) {
		d.MustRegisterDeterministicScalarFunction(name, n, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			return f(args)
		})
	}
	det("pgcat_regex", 3, func(a []driver.Value) (driver.Value, error) {
		if a[0] == nil || a[1] == nil {
			return nil, nil
		}
		re, err := compileRegex(text(a[1]), truthy(a[2]))
		if err != nil {
			return nil, err
		}
		return re.MatchString(text(a[0])), nil
	})
	// LIKE and ILIKE (rendered as calls: SQLite's LIKE operator ignores
	// case and has no default escape). A NULL escape is PostgreSQL's
	// default, the backslash; pgjdbc writes 'education\_num'.
	det("pgcat_like", 4, func(a []driver.Value) (driver.Value, error) {
		if a[0] == nil || a[1] == nil {
			return nil, nil
		}
		esc := `\`
		if a[2] != nil {
			esc = text(a[2])
		}
		return likeMatch(text(a[0]), text(a[1]), esc, truthy(a[3]))
	})
	det("pgcat_format_type", 2, func(a []driver.Value) (driver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		mod := int64(-1)
		if a[1] != nil {
			mod = integer(a[1])
		}
		return formatType(uint32(integer(a[0])), mod), nil
	})
	det("pgcat_regtype_in", 1, func(a []driver.Value) (driver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		if n, ok := a[0].(int64); ok {
			return n, nil
		}
		t, ok := lookupType(strings.Trim(text(a[0]), `"`))
		if !ok {
			return nil, fmt.Errorf("type %q does not exist", text(a[0]))
		}
		return int64(t.OID), nil
	})
	det("pgcat_regtype_out", 1, func(a []driver.Value) (driver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		oid := uint32(integer(a[0]))
		if _, ok := typesByOID[oid]; !ok {
			return strconv.FormatUint(uint64(oid), 10), nil
		}
		return formatType(oid, -1), nil
	})
	det("pgcat_encoding", 1, func(a []driver.Value) (driver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		if integer(a[0]) == 6 { // PG_UTF8 in mb/pg_wchar.h
			return "UTF8", nil
		}
		return "", nil
	})
	det("pgcat_array_to_string", 3, func(a []driver.Value) (driver.Value, error) {
		if a[0] == nil || a[1] == nil {
			return nil, nil
		}
		elems, err := jsonArray(a[0])
		if err != nil {
			return nil, err
		}
		var parts []string
		for _, e := range elems {
			switch {
			case e != nil:
				parts = append(parts, fmt.Sprint(e))
			case a[2] != nil:
				parts = append(parts, text(a[2]))
			}
		}
		return strings.Join(parts, text(a[1])), nil
	})
	det("pgcat_array_out", 1, func(a []driver.Value) (driver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		elems, err := jsonArray(a[0])
		if err != nil {
			return nil, err
		}
		return arrayLiteral(elems), nil
	})
	det("pgcat_array_length", 2, func(a []driver.Value) (driver.Value, error) {
		if a[0] == nil || a[1] == nil || integer(a[1]) != 1 {
			return nil, nil
		}
		elems, err := jsonArray(a[0])
		if err != nil || len(elems) == 0 {
			return nil, err
		}
		return int64(len(elems)), nil
	})
	det("pgcat_size_pretty", 1, func(a []driver.Value) (driver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		return sizePretty(integer(a[0])), nil
	})
	det("pgcat_privilege", 1, func(a []driver.Value) (driver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		return readPrivilege(text(a[0])), nil
	})
	// Lookups in a catalog's relations take the catalog's registry id as
	// their first argument (the driver's functions serve every catalog).
	det("pgcat_regclass_in", 2, func(a []driver.Value) (driver.Value, error) {
		c, err := registered(a[0])
		if err != nil || a[1] == nil {
			return nil, err
		}
		return c.regclassIn(a[1])
	})
	det("pgcat_regclass_out", 2, func(a []driver.Value) (driver.Value, error) {
		c, err := registered(a[0])
		if err != nil || a[1] == nil {
			return nil, err
		}
		return c.regclassOut(uint32(integer(a[1]))), nil
	})
	det("pgcat_table_visible", 2, func(a []driver.Value) (driver.Value, error) {
		c, err := registered(a[0])
		if err != nil || a[1] == nil {
			return nil, err
		}
		// Visible: on the search path (pg_catalog, the served schema).
		rel, ok := c.relOIDs[uint32(integer(a[1]))]
		return ok && (rel[0] == PGCatalog || rel[0] == c.schema), nil
	})
	det("pgcat_nsp_in", 2, func(a []driver.Value) (driver.Value, error) {
		c, err := registered(a[0])
		if err != nil || a[1] == nil {
			return nil, err
		}
		if n, ok := a[1].(int64); ok {
			return n, nil
		}
		_, name := splitQualified(text(a[1]))
		if oid, ok := c.namespaces()[name]; ok {
			return int64(oid), nil
		}
		return nil, fmt.Errorf("schema %q does not exist", name)
	})
	det("pgcat_nsp_out", 2, func(a []driver.Value) (driver.Value, error) {
		c, err := registered(a[0])
		if err != nil || a[1] == nil {
			return nil, err
		}
		oid := uint32(integer(a[1]))
		for name, o := range c.namespaces() {
			if o == oid {
				return quoteIdentIfNeeded(name), nil
			}
		}
		return strconv.FormatUint(uint64(oid), 10), nil
	})
	det("pgcat_quote_ident", 1, func(a []driver.Value) (driver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		return quoteIdentIfNeeded(text(a[0])), nil
	})
	det("pgcat_bool_text", 1, func(a []driver.Value) (driver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		if truthy(a[0]) {
			return "true", nil
		}
		return "false", nil
	})
	det("pgcat_bool", 1, func(a []driver.Value) (driver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		if s, ok := a[0].(string); ok {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "t", "true", "y", "yes", "on", "1":
				return true, nil
			case "f", "false", "n", "no", "off", "0":
				return false, nil
			}
			return nil, fmt.Errorf("invalid input syntax for type boolean: %q", s)
		}
		return truthy(a[0]), nil
	})
	// Set-returning functions in a select list (unnest(ix.indkey) in
	// SQLAlchemy's primary-key query) are rendered so that the query
	// prepares; they are only ever applied to rows of relations the
	// emulation keeps empty, and fail loudly if that changes.
	d.MustRegisterScalarFunction("pgcat_srf", 2, func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
		return nil, fmt.Errorf("set-returning function %s in a select list is not supported in catalog queries", text(a[0]))
	})
}

var regexCache sync.Map // "flags/pattern" → *regexp.Regexp

// compileRegex compiles a PostgreSQL regular expression. The catalog
// patterns clients send ('^(adult)$', '^pg_toast') are in the common
// subset of POSIX AREs and Go's RE2 syntax.
func compileRegex(pattern string, ci bool) (*regexp.Regexp, error) {
	key := "c/" + pattern
	if ci {
		key = "i/" + pattern
	}
	if re, ok := regexCache.Load(key); ok {
		return re.(*regexp.Regexp), nil
	}
	src := pattern
	if ci {
		src = "(?i)" + src
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %w", pattern, err)
	}
	regexCache.Store(key, re)
	return re, nil
}

// likeMatch is PostgreSQL's LIKE: _ one character, % any run, esc quotes
// the next character (like_match.c).
func likeMatch(s, pattern, esc string, ci bool) (bool, error) {
	var b strings.Builder
	b.WriteString("(?s)^")
	if ci {
		b.WriteString("(?i)")
	}
	p := []rune(pattern)
	escRune := rune(-1)
	if e := []rune(esc); len(e) == 1 {
		escRune = e[0]
	} else if len(e) > 1 {
		return false, errors.New("invalid escape string: it must be empty or one character")
	}
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == escRune:
			if i+1 == len(p) {
				return false, errors.New("LIKE pattern must not end with escape character")
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(p[i])))
		case p[i] == '%':
			b.WriteString(".*")
		case p[i] == '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(p[i])))
		}
	}
	b.WriteString("$")
	re, err := compileRegex(b.String(), false)
	if err != nil {
		return false, err
	}
	return re.MatchString(s), nil
}

func text(v driver.Value) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func integer(v driver.Value) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	case bool:
		if x {
			return 1
		}
	case string:
		n, _ := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n
	}
	return 0
}

func truthy(v driver.Value) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		b, _ := strconv.ParseBool(x)
		return b
	}
	return integer(v) != 0
}

// jsonArray decodes an emulated array (JSON text).
func jsonArray(v driver.Value) ([]any, error) {
	var out []any
	if err := json.Unmarshal([]byte(text(v)), &out); err != nil {
		return nil, fmt.Errorf("malformed array value %q", text(v))
	}
	return out, nil
}

// arrayLiteral writes elements in PostgreSQL's array text format:
// {a,"b c",NULL} (arrayfuncs.c: an element is quoted when empty, NULL as
// text, or containing braces, quotes, commas, backslashes or spaces).
func arrayLiteral(elems []any) string {
	parts := make([]string, len(elems))
	for i, e := range elems {
		if e == nil {
			parts[i] = "NULL"
			continue
		}
		s := fmt.Sprint(e)
		if f, ok := e.(float64); ok && f == float64(int64(f)) {
			s = strconv.FormatInt(int64(f), 10)
		}
		if s == "" || strings.EqualFold(s, "null") || strings.ContainsAny(s, "{}\",\\ \t\n") {
			s = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
		}
		parts[i] = s
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// sizePretty is PostgreSQL 15's pg_size_pretty(bigint) (dbsize.c): bytes
// below 10 kB, then each unit while the value, kept with one extra bit for
// rounding, is below 2*10*1024-1; halves round away from zero.
func sizePretty(size int64) string {
	const limit = 10 * 1024
	const limit2 = limit*2 - 1
	abs := func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}
	half := func(x int64) int64 {
		if x < 0 {
			return (x - 1) / 2
		}
		return (x + 1) / 2
	}
	if abs(size) < limit {
		return strconv.FormatInt(size, 10) + " bytes"
	}
	size /= 1 << 9
	for _, u := range []string{"kB", "MB", "GB", "TB"} {
		if abs(size) < limit2 {
			return strconv.FormatInt(half(size), 10) + " " + u
		}
		size /= 1 << 10
	}
	return strconv.FormatInt(half(size), 10) + " PB"
}

// readPrivilege answers has_*_privilege for the emulated objects: a
// session may read (SELECT, USAGE, CONNECT) — through differential privacy
// — and never write, since the proxy refuses every write.
func readPrivilege(priv string) bool {
	for _, p := range strings.Split(priv, ",") {
		p = strings.ToUpper(strings.TrimSpace(p))
		p = strings.TrimSuffix(p, " WITH GRANT OPTION")
		switch p {
		case "SELECT", "USAGE", "CONNECT", "REFERENCES":
			return true
		}
	}
	return false
}

// splitQualified reads a possibly qualified, possibly quoted name as
// regclass input does: unquoted parts fold to lower case.
func splitQualified(s string) (schema, name string) {
	var (
		parts  []string
		cur    strings.Builder
		quoted bool
	)
	for i := 0; i <= len(s); i++ {
		if i == len(s) || (!quoted && s[i] == '.') {
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		}
		switch {
		case s[i] == '"' && quoted && i+1 < len(s) && s[i+1] == '"':
			cur.WriteByte('"')
			i++
		case s[i] == '"':
			quoted = !quoted
		case quoted:
			cur.WriteByte(s[i])
		default:
			cur.WriteString(strings.ToLower(string(s[i])))
		}
	}
	if len(parts) >= 2 {
		return parts[len(parts)-2], parts[len(parts)-1]
	}
	return "", parts[0]
}

var plainIdent = regexp.MustCompile(`^[a-z_][a-z0-9_$]*$`)

// quoteIdentIfNeeded is quote_ident: a name is quoted unless it is lower
// case letters, digits and underscores.
func quoteIdentIfNeeded(s string) string {
	if plainIdent.MatchString(s) {
		return s
	}
	return quoteIdent(s)
}
