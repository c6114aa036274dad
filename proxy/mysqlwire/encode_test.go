package mysqlwire

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"vitess.io/vitess/go/mysql/sqlerror"
	"vitess.io/vitess/go/sqltypes"
	querypb "vitess.io/vitess/go/vt/proto/query"

	"github.com/dpproxy/dpproxy/proxy"
)

func TestToValue(t *testing.T) {
	cases := []struct {
		typ  proxy.ColumnType
		in   proxy.Value
		want sqltypes.Value
	}{
		{proxy.TypeInt, int64(-7), sqltypes.NewInt64(-7)},
		{proxy.TypeInt, 3.0, sqltypes.NewInt64(3)},
		{proxy.TypeInt, uint64(5), sqltypes.NewInt64(5)},
		{proxy.TypeFloat, 1234567.25, sqltypes.MakeTrusted(sqltypes.Float64, []byte("1234567.25"))},
		{proxy.TypeFloat, 0.1, sqltypes.MakeTrusted(sqltypes.Float64, []byte("0.1"))},
		{proxy.TypeFloat, 1e20, sqltypes.MakeTrusted(sqltypes.Float64, []byte("1e20"))},
		{proxy.TypeFloat, int64(2), sqltypes.MakeTrusted(sqltypes.Float64, []byte("2"))},
		{proxy.TypeString, "x", sqltypes.NewVarChar("x")},
		{proxy.TypeString, []byte("y"), sqltypes.NewVarChar("y")},
		{proxy.TypeString, int64(12), sqltypes.NewVarChar("12")},
		{proxy.TypeDate, "2024-01-02", sqltypes.NewDate("2024-01-02")},
		{proxy.TypeDate, time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), sqltypes.NewDate("2024-01-02")},
		{proxy.TypeDateTime, "2024-01-02T03:04:05", sqltypes.NewDatetime("2024-01-02 03:04:05")},
		{proxy.TypeDateTime, "2024-01-02 03:04:05.5", sqltypes.NewDatetime("2024-01-02 03:04:05.500000")},
		{proxy.TypeDateTime, "2024-01-02", sqltypes.NewDatetime("2024-01-02 00:00:00")},
		{proxy.TypeInt, nil, sqltypes.NULL},
		{proxy.TypeNull, nil, sqltypes.NULL},
	}
	for _, c := range cases {
		got, err := toValue(c.typ, c.in)
		if err != nil {
			t.Errorf("toValue(%v, %#v): %v", c.typ, c.in, err)
			continue
		}
		if got.Type() != c.want.Type() || string(got.Raw()) != string(c.want.Raw()) {
			t.Errorf("toValue(%v, %#v) = %v %q, want %v %q", c.typ, c.in, got.Type(), got.Raw(), c.want.Type(), c.want.Raw())
		}
	}
}

func TestToValueRefusesMismatches(t *testing.T) {
	cases := []struct {
		typ proxy.ColumnType
		in  proxy.Value
	}{
		{proxy.TypeInt, "7"},
		{proxy.TypeInt, 2.5},
		{proxy.TypeInt, math.Pow(2, 63)},
		{proxy.TypeInt, uint64(math.MaxUint64)},
		{proxy.TypeFloat, "1.5"},
		{proxy.TypeDate, "yesterday"},
		{proxy.TypeDate, int64(20240102)},
		{proxy.TypeNull, int64(1)},
		{proxy.TypeString, struct{}{}},
	}
	for _, c := range cases {
		if got, err := toValue(c.typ, c.in); err == nil {
			t.Errorf("toValue(%v, %#v) = %v, want an error", c.typ, c.in, got)
		}
	}
}

func TestToFields(t *testing.T) {
	r, err := toResult(&proxy.Result{
		Columns: []proxy.Column{
			{Name: "n", Type: proxy.TypeInt},
			{Name: "avg", Type: proxy.TypeFloat},
			{Name: "city", Type: proxy.TypeString, Table: "people", Schema: "shop"},
			{Name: "z", Type: proxy.TypeNull},
			{Name: "day", Type: proxy.TypeDate},
			{Name: "at", Type: proxy.TypeDateTime},
		},
		Rows: [][]proxy.Value{{int64(1), 2.0, strings.Repeat("x", 2000), nil, "2024-01-02", "2024-01-02 03:04:05.25"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	f := r.Fields
	check := func(i int, typ querypb.Type, charset, length, decimals uint32) {
		t.Helper()
		if f[i].Type != typ || f[i].Charset != charset || f[i].ColumnLength != length || f[i].Decimals != decimals {
			t.Errorf("field %s = %v charset %d length %d decimals %d; want %v %d %d %d",
				f[i].Name, f[i].Type, f[i].Charset, f[i].ColumnLength, f[i].Decimals, typ, charset, length, decimals)
		}
	}
	check(0, sqltypes.Int64, 63, 20, 0)
	check(1, sqltypes.Float64, 63, 22, 31)
	check(2, sqltypes.VarChar, 255, 2000, 0)
	check(3, sqltypes.Null, 63, 0, 0)
	check(4, sqltypes.Date, 63, 10, 0)
	check(5, sqltypes.Datetime, 63, 26, 6)
	if f[2].Table != "people" || f[2].OrgTable != "people" || f[2].Database != "shop" || f[2].OrgName != "city" {
		t.Errorf("table metadata lost: %+v", f[2])
	}
	if f[0].Table != "" || f[0].OrgName != "" {
		t.Errorf("computed column has table metadata: %+v", f[0])
	}
}

func TestToResultOK(t *testing.T) {
	r, err := toResult(&proxy.Result{AffectedRows: 4})
	if err != nil || r.Fields != nil || r.RowsAffected != 4 {
		t.Errorf("toResult(OK) = %+v, %v", r, err)
	}
	if _, err := toResult(&proxy.Result{Columns: []proxy.Column{{Name: "a"}}, Rows: [][]proxy.Value{{"x", "y"}}}); err == nil {
		t.Error("a row wider than the columns was accepted")
	}
	if _, err := toResult(nil); err == nil {
		t.Error("a nil result was accepted")
	}
}

func TestBindValue(t *testing.T) {
	cases := []struct {
		bv   *querypb.BindVariable
		want proxy.Value
	}{
		{sqltypes.Int64BindVariable(-3), int64(-3)},
		{sqltypes.Uint64BindVariable(9), int64(9)},
		{sqltypes.Uint64BindVariable(math.MaxUint64), float64(math.MaxUint64)},
		{sqltypes.Float64BindVariable(2.5), 2.5},
		{sqltypes.DecimalBindVariable("1.25"), 1.25},
		{sqltypes.StringBindVariable("a"), "a"},
		{sqltypes.BytesBindVariable([]byte("b")), "b"},
		{sqltypes.ValueBindVariable(sqltypes.NULL), nil},
		{sqltypes.ValueBindVariable(sqltypes.NewDatetime("2024-01-02 03:04:05")), "2024-01-02 03:04:05"},
	}
	for _, c := range cases {
		got, err := bindValue(c.bv)
		if err != nil || got != c.want {
			t.Errorf("bindValue(%v) = %#v, %v; want %#v", c.bv, got, err, c.want)
		}
	}
}

func TestToSQLErrorForContextErrors(t *testing.T) {
	cases := []struct {
		err   error
		num   sqlerror.ErrorCode
		state string
	}{
		{fmt.Errorf("backend: %w", context.DeadlineExceeded), sqlerror.ERQueryTimeout, "HY000"},
		{context.Canceled, sqlerror.ERQueryInterrupted, "70100"},
		{fmt.Errorf("wrapped: %w", proxy.Errorf(proxy.CodeBudget, "over budget")), sqlerror.ERSpecifiedAccessDenied, "DP001"},
		{&proxy.Error{Code: proxy.Code(999), Msg: "new code"}, sqlerror.ERUnknownError, "HY000"},
		{errors.New("plain"), sqlerror.ERUnknownError, "HY000"},
	}
	for _, c := range cases {
		got := toSQLError(c.err)
		if got.Num != c.num || got.State != c.state {
			t.Errorf("toSQLError(%v) = %d %s, want %d %s", c.err, got.Num, got.State, c.num, c.state)
		}
	}
	if wireError(nil) != nil {
		t.Error("wireError(nil) is not nil")
	}
}
