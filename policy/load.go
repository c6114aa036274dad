package policy

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Load reads, parses and validates the policy file at path.
func Load(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	p, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	return p, nil
}

// Parse parses and validates a policy held in memory. Errors name the line
// they are about.
func Parse(data []byte) (*Policy, error) {
	p, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return p, nil
}

func parse(data []byte) (*Policy, error) {
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlError(err, nil)
	}
	if n := countDocuments(file); n > 1 {
		return nil, fmt.Errorf("the file holds %d YAML documents, a policy is exactly one", n)
	}
	keys := keyIndex{}
	for _, doc := range file.Docs {
		keys.add(doc.Body, nil)
	}

	p := new(Policy)
	// Unknown keys are errors: a misspelt bound ("lowr") must not silently
	// leave a column unbounded.
	if err := yaml.UnmarshalWithOptions(data, p, yaml.DisallowUnknownField()); err != nil {
		return nil, yamlError(err, keys)
	}
	p.keys = keys

	// δ = 0 is a meaningful setting (pure ε-DP), so its default can only be
	// told apart from an explicit 0 while the file's keys are at hand.
	if _, ok := keys.pos("defaults", "delta"); !ok {
		p.Defaults.Delta = defaultDelta
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return p, nil
}

func countDocuments(file *ast.File) int {
	n := 0
	for _, doc := range file.Docs {
		if doc.Body != nil {
			n++
		}
	}
	return n
}

// lineError is an error about one place in the policy file.
type lineError struct {
	Line int
	Msg  string
	Err  error // the YAML library's error, if any

	column int // of the value, when a decoder knows it
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }
func (e *lineError) Unwrap() error { return e.Err }

// yamlError turns the YAML library's error into a one-line sentence that
// starts with the line number (the library's own text spans several lines
// of source excerpt).
func yamlError(err error, keys keyIndex) error {
	var le *lineError
	if errors.As(err, &le) {
		// Our own decoders (Duration) know the line but not the key.
		if path := keys.keyBefore(le.Line, le.column); le.column > 0 && path != "" {
			return &lineError{Line: le.Line, Msg: path + ": " + le.Msg, Err: le.Err}
		}
		return le
	}
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil {
		return err
	}
	tok := ye.GetToken()
	msg := ye.GetMessage()
	var unknown *yaml.UnknownFieldError
	var typ *yaml.TypeError
	switch {
	case errors.As(err, &unknown):
		msg = fmt.Sprintf("unknown key %q", tok.Value)
		if path := keys.pathAt(tok.Position.Line, tok.Position.Column); path != "" {
			msg += " at " + path
		}
	case errors.As(err, &typ) && typ.DstType != nil:
		msg = fmt.Sprintf("%q is not %s", tok.Value, typeName(typ.DstType))
		if path := keys.keyBefore(tok.Position.Line, tok.Position.Column); path != "" {
			msg = path + ": " + msg
		}
	}
	return &lineError{Line: tok.Position.Line, Msg: msg, Err: err}
}

// typeName says in YAML's words what a Go type wants.
func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	case reflect.Pointer:
		return typeName(t.Elem())
	}
	return "a " + t.String()
}

// keyIndex records where each key of the file was written, by its path of
// lower-cased keys (sequence items by index).
type keyIndex map[string]keyPos

type keyPos struct{ line, column int }

// pathSep cannot occur in YAML keys we care about, unlike "." which may
// occur in table names.
const pathSep = "\x00"

func (k keyIndex) add(n ast.Node, path []string) {
	switch n := n.(type) {
	case *ast.MappingNode:
		for _, mv := range n.Values {
			k.add(mv, path)
		}
	case *ast.MappingValueNode:
		tok := n.Key.GetToken()
		if tok == nil {
			return
		}
		p := append(path[:len(path):len(path)], strings.ToLower(tok.Value))
		k[strings.Join(p, pathSep)] = keyPos{tok.Position.Line, tok.Position.Column}
		k.add(n.Value, p)
	case *ast.SequenceNode:
		for i, v := range n.Values {
			k.add(v, append(path[:len(path):len(path)], fmt.Sprint(i)))
		}
	case *ast.TagNode:
		k.add(n.Value, path)
	case *ast.AnchorNode:
		k.add(n.Value, path)
	}
}

// pos reports where the key at path was written.
func (k keyIndex) pos(path ...string) (keyPos, bool) {
	if k == nil {
		return keyPos{}, false
	}
	lower := make([]string, len(path))
	for i, s := range path {
		lower[i] = strings.ToLower(s)
	}
	p, ok := k[strings.Join(lower, pathSep)]
	return p, ok
}

// line is the line of the key at path or, when that key is absent (a
// required key that is missing), of its nearest written ancestor; 0 if
// unknown.
func (k keyIndex) line(path ...string) int {
	for n := len(path); n > 0; n-- {
		if p, ok := k.pos(path[:n]...); ok {
			return p.line
		}
	}
	return 0
}

// pathAt is the dotted path of the key written at line:column, or "".
func (k keyIndex) pathAt(line, column int) string {
	for path, p := range k {
		if p.line == line && p.column == column {
			return strings.ReplaceAll(path, pathSep, ".")
		}
	}
	return ""
}

// keyBefore is the dotted path of the last key written on line before
// column: the key of a value written there, or "".
func (k keyIndex) keyBefore(line, column int) string {
	best, bestCol := "", 0
	for path, p := range k {
		if p.line == line && p.column < column && p.column > bestCol {
			best, bestCol = path, p.column
		}
	}
	return strings.ReplaceAll(best, pathSep, ".")
}
