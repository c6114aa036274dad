package pgwire

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// wire is a logged-in connection driven message by message.
type wire struct {
	t  *testing.T
	pc *pgconn.PgConn
	f  *pgproto3.Frontend
}

func openWire(t *testing.T, s *Server) *wire {
	t.Helper()
	pc, err := pgconn.Connect(context.Background(), dsn(s, "alice:"+alicePassword, "sslmode=disable"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close(context.Background()) })
	_ = pc.Conn().SetDeadline(time.Now().Add(20 * time.Second))
	return &wire{t: t, pc: pc, f: pc.Frontend()}
}

func (w *wire) send(msgs ...pgproto3.FrontendMessage) {
	w.t.Helper()
	for _, m := range msgs {
		w.f.Send(m)
	}
	if err := w.f.Flush(); err != nil {
		w.t.Fatal(err)
	}
}

// expect reads one message per name ("ErrorResponse:42601",
// "CommandComplete:SELECT 1", "DataRow", ...) and returns them.
func (w *wire) expect(want ...string) []pgproto3.BackendMessage {
	w.t.Helper()
	var got []pgproto3.BackendMessage
	for i, name := range want {
		m, err := w.f.Receive()
		if err != nil {
			w.t.Fatalf("message %d (%s): %v", i, name, err)
		}
		desc := strings.TrimPrefix(fmt.Sprintf("%T", m), "*pgproto3.")
		switch m := m.(type) {
		case *pgproto3.ErrorResponse:
			desc += ":" + m.Code
		case *pgproto3.CommandComplete:
			desc += ":" + string(m.CommandTag)
		case *pgproto3.ReadyForQuery:
			desc += ":" + string(m.TxStatus)
		}
		if !strings.HasPrefix(desc, name) {
			w.t.Fatalf("message %d is %s (%+v), want %s", i, desc, m, name)
		}
		// Receive's messages are valid until the next Receive: keep copies
		// of what tests look into.
		switch m := m.(type) {
		case *pgproto3.DataRow:
			vals := make([][]byte, len(m.Values))
			for j, v := range m.Values {
				if v != nil {
					vals[j] = append([]byte{}, v...)
				}
			}
			got = append(got, &pgproto3.DataRow{Values: vals})
		case *pgproto3.RowDescription:
			fields := append([]pgproto3.FieldDescription(nil), m.Fields...)
			got = append(got, &pgproto3.RowDescription{Fields: fields})
		case *pgproto3.ParameterDescription:
			got = append(got, &pgproto3.ParameterDescription{ParameterOIDs: append([]uint32(nil), m.ParameterOIDs...)})
		default:
			got = append(got, m)
		}
	}
	return got
}

func TestSkipUntilSync(t *testing.T) {
	s, e := startServer(t)
	w := openWire(t, s)
	w.send(
		&pgproto3.Parse{Query: "error prepare"},
		&pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Query{String: "select many"}, // skipped too, as in PostgreSQL
		&pgproto3.Sync{},
		&pgproto3.Parse{Query: "select 1"},
		&pgproto3.Bind{},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	w.expect("ErrorResponse:42601", "ReadyForQuery:I",
		"ParseComplete", "BindComplete", "DataRow", "CommandComplete:SELECT 1", "ReadyForQuery:I")
	_, _, received, _ := e.snapshot()
	for _, sql := range received {
		if strings.Contains(sql, "many") {
			t.Fatalf("a skipped message reached the engine: %q", received)
		}
	}
}

func TestErrorAtExecuteSkipsRest(t *testing.T) {
	s, _ := startServer(t)
	w := openWire(t, s)
	w.send(
		&pgproto3.Parse{Name: "e", Query: "error refused"},
		&pgproto3.Bind{PreparedStatement: "e"},
		&pgproto3.Execute{},
		&pgproto3.Bind{PreparedStatement: "e"},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
		&pgproto3.Query{String: "select 1"},
	)
	w.expect("ParseComplete", "BindComplete", "ErrorResponse:42501", "ReadyForQuery:I",
		"RowDescription", "DataRow", "CommandComplete:SELECT 1", "ReadyForQuery:I")
}

func TestBinaryParameters(t *testing.T) {
	s, _ := startServer(t)
	w := openWire(t, s)
	be16 := func(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
	be32 := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	// 12345.678 in numeric_send's form: 3 digits, weight 1, positive,
	// dscale 3: 1 | 2345 . 6780.
	numeric := append(append(append(append(be16(3), be16(1)...), be16(0)...), be16(3)...), append(append(be16(1), be16(2345)...), be16(6780)...)...)
	params := []struct {
		oid  uint32
		val  []byte
		want string
	}{
		{oidInt2, be16(0xfffe), "int64 -2"},
		{oidInt4, be32(70000), "int64 70000"},
		{oidInt8, be64(1 << 40), "int64 1099511627776"},
		{oidFloat4, be32(math.Float32bits(0.5)), "float64 0.5"},
		{oidFloat8, be64(math.Float64bits(-2.25)), "float64 -2.25"},
		{oidText, []byte("héllo"), "string héllo"},
		{oidVarchar, []byte("v"), "string v"},
		{oidBool, []byte{1}, "bool true"},
		{oidDate, be32(math.MaxUint32), "string 1999-12-31"}, // -1 day
		{oidTimestamp, be64(uint64(86400*1e6 + 500)), "string 2000-01-02 00:00:00.0005"},
		{oidNumeric, numeric, "float64 12345.678"},
		{0, []byte("unspecified"), "string unspecified"},
		{oidInt8, nil, "<nil> <nil>"},
	}
	oids := make([]uint32, len(params))
	vals := make([][]byte, len(params))
	for i, p := range params {
		oids[i], vals[i] = p.oid, p.val
	}
	w.send(
		&pgproto3.Parse{Name: "b", Query: "select args" + strings.Repeat(" $", len(params)), ParameterOIDs: oids},
		&pgproto3.Describe{ObjectType: 'S', Name: "b"},
		&pgproto3.Bind{PreparedStatement: "b", ParameterFormatCodes: []int16{formatBinary}, Parameters: vals},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	msgs := w.expect("ParseComplete", "ParameterDescription", "NoData", "BindComplete")
	if got := msgs[1].(*pgproto3.ParameterDescription).ParameterOIDs; fmt.Sprint(got) != fmt.Sprint(oids) {
		t.Fatalf("described parameters %v, want %v", got, oids)
	}
	for _, p := range params {
		row := w.expect("DataRow")[0].(*pgproto3.DataRow)
		if got := string(row.Values[0]); got != p.want {
			t.Errorf("OID %d: engine got %q, want %q", p.oid, got, p.want)
		}
	}
	w.expect("CommandComplete:SELECT 13", "ReadyForQuery:I")

	// A value of the wrong size is an error, not a crash.
	w.send(
		&pgproto3.Bind{PreparedStatement: "b", ParameterFormatCodes: []int16{formatBinary}, Parameters: append([][]byte{{1, 2, 3}}, vals[1:]...)},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	w.expect("ErrorResponse:22P03", "ReadyForQuery:I")
}

func TestTextParametersOfDeclaredTypes(t *testing.T) {
	s, _ := startServer(t)
	w := openWire(t, s)
	w.send(
		&pgproto3.Parse{Query: "select args $ $ $ $ $", ParameterOIDs: []uint32{oidInt4, oidBool, oidFloat8, oidNumeric, oidDate}},
		&pgproto3.Bind{Parameters: [][]byte{[]byte(" 42"), []byte("on"), []byte("-Infinity"), []byte("1.5"), []byte("2024-01-02")}},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	msgs := w.expect("ParseComplete", "BindComplete", "DataRow", "DataRow", "DataRow", "DataRow", "DataRow", "CommandComplete:SELECT 5", "ReadyForQuery:I")
	var got []string
	for _, m := range msgs[2:7] {
		got = append(got, string(m.(*pgproto3.DataRow).Values[0]))
	}
	want := []string{"int64 42", "bool true", "float64 -Inf", "float64 1.5", "string 2024-01-02"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	w.send(
		&pgproto3.Parse{Query: "select args $", ParameterOIDs: []uint32{oidInt8}},
		&pgproto3.Bind{Parameters: [][]byte{[]byte("forty-two")}},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	w.expect("ParseComplete", "ErrorResponse:22P02", "ReadyForQuery:I")
	// Wrong parameter count: an error, the connection goes on.
	w.send(
		&pgproto3.Parse{Query: "select args $ $"},
		&pgproto3.Bind{Parameters: [][]byte{[]byte("1")}},
		&pgproto3.Sync{},
	)
	w.expect("ParseComplete", "ErrorResponse:08P01", "ReadyForQuery:I")
}

func TestPortalSuspended(t *testing.T) {
	s, _ := startServer(t)
	w := openWire(t, s)
	w.send(
		&pgproto3.Parse{Query: "select many"},
		&pgproto3.Bind{DestinationPortal: "c"},
		&pgproto3.Execute{Portal: "c", MaxRows: 3},
		&pgproto3.Execute{Portal: "c", MaxRows: 3},
		&pgproto3.Execute{Portal: "c"},
		&pgproto3.Execute{Portal: "c"},
		&pgproto3.Sync{},
		// Sync ended the implicit transaction: the portal is gone.
		&pgproto3.Execute{Portal: "c"},
		&pgproto3.Sync{},
	)
	msgs := w.expect("ParseComplete", "BindComplete",
		"DataRow", "DataRow", "DataRow", "PortalSuspended",
		"DataRow", "DataRow", "DataRow", "PortalSuspended",
		"DataRow", "DataRow", "DataRow", "DataRow", "CommandComplete:SELECT 4",
		"CommandComplete:SELECT 0",
		"ReadyForQuery:I",
		"ErrorResponse:34000", "ReadyForQuery:I")
	if got := string(msgs[13].(*pgproto3.DataRow).Values[0]); got != "9" {
		t.Fatalf("last row %q", got)
	}
}

func TestDescribe(t *testing.T) {
	s, e := startServer(t)
	w := openWire(t, s)
	// Columns known at Prepare: the statement describes them.
	w.send(
		&pgproto3.Parse{Name: "k", Query: "select known $"},
		&pgproto3.Describe{ObjectType: 'S', Name: "k"},
		&pgproto3.Bind{PreparedStatement: "k", Parameters: [][]byte{[]byte("1")}, ResultFormatCodes: []int16{formatBinary}},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	msgs := w.expect("ParseComplete", "ParameterDescription", "RowDescription", "BindComplete", "RowDescription",
		"DataRow", "DataRow", "CommandComplete:SELECT 2", "ReadyForQuery:I")
	if pd := msgs[1].(*pgproto3.ParameterDescription); len(pd.ParameterOIDs) != 1 || pd.ParameterOIDs[0] != 0 {
		t.Fatalf("parameters %v", pd.ParameterOIDs)
	}
	if f := msgs[2].(*pgproto3.RowDescription).Fields; len(f) != 6 || f[0].Format != formatText {
		t.Fatalf("statement fields %+v", f)
	}
	if f := msgs[4].(*pgproto3.RowDescription).Fields; f[0].Format != formatBinary || f[0].DataTypeOID != oidInt8 {
		t.Fatalf("portal fields %+v", f)
	}
	row := msgs[5].(*pgproto3.DataRow)
	if int64(binary.BigEndian.Uint64(row.Values[0])) != -42 || math.Float64frombits(binary.BigEndian.Uint64(row.Values[1])) != 1234567 {
		t.Fatalf("binary row %v", row.Values)
	}
	if days := int32(binary.BigEndian.Uint32(row.Values[3])); days != 8825 { // 2000-01-01 to 2024-02-29
		t.Fatalf("binary date %d", days)
	}

	// Columns unknown at Prepare: NoData for the statement; the portal runs
	// at Describe, once.
	_, _, before, _ := e.snapshot()
	w.send(
		&pgproto3.Parse{Name: "u", Query: "select mixed"},
		&pgproto3.Describe{ObjectType: 'S', Name: "u"},
		&pgproto3.Bind{PreparedStatement: "u"},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	w.expect("ParseComplete", "ParameterDescription", "NoData", "BindComplete", "RowDescription",
		"DataRow", "DataRow", "CommandComplete:SELECT 2", "ReadyForQuery:I")
	_, _, after, _ := e.snapshot()
	runs := 0
	for _, sql := range after[len(before):] {
		if sql == "select mixed" {
			runs++
		}
	}
	if runs != 1 {
		t.Fatalf("the portal ran %d times: %q", runs, after[len(before):])
	}

	// A result format count that fits no column count.
	w.send(
		&pgproto3.Bind{PreparedStatement: "k", Parameters: [][]byte{[]byte("1")}, ResultFormatCodes: []int16{0, 1}},
		&pgproto3.Sync{},
	)
	w.expect("ErrorResponse:08P01", "ReadyForQuery:I")
}

func TestStatementsAndPortals(t *testing.T) {
	s, _ := startServer(t)
	w := openWire(t, s)
	w.send(
		&pgproto3.Parse{Name: "s", Query: "select 1"},
		&pgproto3.Parse{Name: "s", Query: "select 1"},
		&pgproto3.Sync{},
		&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s"},
		&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s"},
		&pgproto3.Sync{},
		&pgproto3.Query{String: "begin"},
		&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s"},
		&pgproto3.Close{ObjectType: 'S', Name: "s"},
		&pgproto3.Execute{Portal: "p"},
		&pgproto3.Sync{},
		&pgproto3.Bind{PreparedStatement: "s"},
		&pgproto3.Sync{},
		&pgproto3.Close{ObjectType: 'P', Name: "nothing"},
		&pgproto3.Sync{},
	)
	w.expect("ParseComplete", "ErrorResponse:42P05", "ReadyForQuery:I",
		"BindComplete", "ErrorResponse:42P03", "ReadyForQuery:I",
		"CommandComplete:BEGIN", "ReadyForQuery:T",
		"BindComplete", "CloseComplete", "ErrorResponse:34000", "ReadyForQuery:T",
		"ErrorResponse:26000", "ReadyForQuery:T",
		"CloseComplete", "ReadyForQuery:T")
}

func TestEmptyQueries(t *testing.T) {
	s, _ := startServer(t)
	w := openWire(t, s)
	w.send(
		&pgproto3.Query{String: " ;\n"},
		&pgproto3.Parse{Query: ""},
		&pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	w.expect("EmptyQueryResponse", "ReadyForQuery:I",
		"ParseComplete", "BindComplete", "NoData", "EmptyQueryResponse", "ReadyForQuery:I")
}

func TestFlushWithoutSync(t *testing.T) {
	s, _ := startServer(t)
	w := openWire(t, s)
	w.send(&pgproto3.Parse{Query: "select 1"}, &pgproto3.Flush{})
	w.expect("ParseComplete")
	w.send(&pgproto3.FunctionCall{Function: 1}, &pgproto3.Sync{})
	w.expect("ErrorResponse:0A000", "ReadyForQuery:I", "ReadyForQuery:I")
}

// A simple query of several statements runs each in turn, as PostgreSQL
// does: each statement's results, one ReadyForQuery at the end; after an
// error the rest are skipped.
func TestSimpleQuerySeveralStatements(t *testing.T) {
	s, e := startServer(t)
	w := openWire(t, s)
	w.send(&pgproto3.Query{String: "select 1; select many;commit"})
	w.expect("RowDescription", "DataRow", "CommandComplete:SELECT 1",
		"RowDescription", "DataRow", "DataRow", "DataRow", "DataRow", "DataRow",
		"DataRow", "DataRow", "DataRow", "DataRow", "DataRow", "CommandComplete:SELECT 10",
		"CommandComplete:COMMIT", "ReadyForQuery:I")

	// An error in the middle: sent, the rest skipped, one ReadyForQuery.
	w.send(&pgproto3.Query{String: "begin; select fail; select many; commit"})
	w.expect("CommandComplete:BEGIN", "ErrorResponse:42501", "ReadyForQuery:T")
	_, _, received, _ := e.snapshot()
	if last := received[len(received)-1]; last != "select fail" {
		t.Fatalf("a statement after the error reached the engine: %q", received)
	}
	w.send(&pgproto3.Query{String: "commit"})
	w.expect("CommandComplete:COMMIT", "ReadyForQuery:I")

	// Empty statements between semicolons are no statements; text with
	// none at all is EmptyQueryResponse.
	w.send(&pgproto3.Query{String: ";select 1;; ;\n-- c\n;select 1;"})
	w.expect("RowDescription", "DataRow", "CommandComplete:SELECT 1",
		"RowDescription", "DataRow", "CommandComplete:SELECT 1", "ReadyForQuery:I")
	for _, q := range []string{";;", "-- only a comment", "/* c */ ; -- d"} {
		w.send(&pgproto3.Query{String: q})
		w.expect("EmptyQueryResponse", "ReadyForQuery:I")
	}

	// A ';' inside a string, a dollar quote or a quoted identifier does
	// not cut.
	w.send(&pgproto3.Query{String: `select echo 'a;b'; select echo $$c;'d$$;select echo $x$e;$$;f$x$; select echo E'g\';h'`})
	msgs := w.expect("RowDescription", "DataRow", "CommandComplete:SELECT 1",
		"RowDescription", "DataRow", "CommandComplete:SELECT 1",
		"RowDescription", "DataRow", "CommandComplete:SELECT 1",
		"RowDescription", "DataRow", "CommandComplete:SELECT 1", "ReadyForQuery:I")
	var got []string
	for _, m := range msgs {
		if row, ok := m.(*pgproto3.DataRow); ok {
			got = append(got, string(row.Values[0]))
		}
	}
	want := []string{`'a;b'`, `$$c;'d$$`, `$x$e;$$;f$x$`, `E'g\';h'`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("statements %q, want %q", got, want)
	}

	// A syntax error anywhere runs nothing, as in PostgreSQL.
	_, _, before, _ := e.snapshot()
	w.send(&pgproto3.Query{String: "select 1; select 1 +; select 1"})
	w.expect("ErrorResponse:42601", "ReadyForQuery:I")
	if _, _, after, _ := e.snapshot(); len(after) != len(before)+1 || after[len(after)-1] != "select 1; select 1 +; select 1" {
		t.Fatalf("engine got %q", after[len(before):])
	}
}
