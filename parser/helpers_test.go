package parser

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// Constructors that keep expected models short.

func col(name string) *ColumnRef          { return &ColumnRef{Name: name} }
func tcol(table, name string) *ColumnRef  { return &ColumnRef{Table: table, Name: name} }
func lit(v any) *Literal                  { return &Literal{Value: v} }
func dec(f float64, text string) *Literal { return &Literal{Value: f, IsDecimal: true, Text: text} }
func fn(name string, args ...Expr) *Func  { return &Func{Name: name, Args: args} }
func bin(op Op, l, r Expr) *Binary        { return &Binary{Op: op, L: l, R: r} }
func not(x Expr) *Unary                   { return &Unary{Op: OpNot, X: x} }
func sysvar(name string) *Variable        { return &Variable{Name: name, System: true} }
func table(name string) *TableName        { return &TableName{Name: name} }
func countStar() *Func                    { return &Func{Name: "count", Star: true} }

func item(e Expr, text string) SelectItem { return SelectItem{Expr: e, Text: text} }

// sel1 is "SELECT <e>" without FROM, as the expression tests parse it.
func sel1(e Expr, text string) *Select { return &Select{Items: []SelectItem{item(e, text)}} }

// mustParse parses sql as MySQL and fails the test on an error.
func mustParse(t *testing.T, sql string) (Statement, int) {
	t.Helper()
	stmt, n, err := Parse(sql, MySQL)
	if err != nil {
		t.Fatalf("Parse(%q): %v", sql, err)
	}
	return stmt, n
}

// checkModel compares a parsed model with the expected one and prints both
// as readable trees on a mismatch.
func checkModel(t *testing.T, sql string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse(%q):\n got: %s\nwant: %s", sql, dump(got), dump(want))
	}
}

// dump renders a model value with its type names and without pointers.
func dump(v any) string {
	var b strings.Builder
	dumpValue(&b, reflect.ValueOf(v))
	return b.String()
}

func dumpValue(b *strings.Builder, v reflect.Value) {
	switch v.Kind() {
	case reflect.Invalid:
		b.WriteString("nil")
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		if v.Kind() == reflect.Pointer {
			b.WriteString("&")
		}
		dumpValue(b, v.Elem())
	case reflect.Struct:
		b.WriteString(v.Type().Name() + "{")
		first := true
		for i := range v.NumField() {
			f := v.Field(i)
			if f.IsZero() {
				continue
			}
			if !first {
				b.WriteString(", ")
			}
			first = false
			b.WriteString(v.Type().Field(i).Name + ": ")
			dumpValue(b, f)
		}
		b.WriteString("}")
	case reflect.Slice:
		b.WriteString("[")
		for i := range v.Len() {
			if i > 0 {
				b.WriteString(", ")
			}
			dumpValue(b, v.Index(i))
		}
		b.WriteString("]")
	default:
		fmt.Fprintf(b, "%#v", v.Interface())
	}
}

// checkUnsupported asserts that sql is refused as *UnsupportedError{What: what}.
func checkUnsupported(t *testing.T, sql, what string) {
	t.Helper()
	stmt, _, err := Parse(sql, MySQL)
	unsupported, ok := err.(*UnsupportedError)
	if !ok {
		t.Errorf("Parse(%q) = %s, %v; want *UnsupportedError", sql, dump(stmt), err)
		return
	}
	if unsupported.What != what {
		t.Errorf("Parse(%q) refused %q, want %q", sql, unsupported.What, what)
	}
}
