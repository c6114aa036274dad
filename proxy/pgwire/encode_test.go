package pgwire

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/proxy"
)

// TestFormatFloat checks float8out's output (PostgreSQL 12+,
// extra_float_digits = 1) for values where Go's own formats differ.
func TestFormatFloat(t *testing.T) {
	for f, want := range map[float64]string{
		1234567:              "1234567",
		0.1:                  "0.1",
		1e-4:                 "0.0001",
		1e-5:                 "1e-05",
		123456789012345:      "123456789012345",
		1e15:                 "1e+15",
		1.5e300:              "1.5e+300",
		-2.5:                 "-2.5",
		0:                    "0",
		math.Copysign(0, -1): "-0",
		math.Inf(1):          "Infinity",
		math.Inf(-1):         "-Infinity",
		math.NaN():           "NaN",
		0.30000000000000004:  "0.30000000000000004",
		5e-324:               "5e-324",
		math.MaxFloat64:      "1.7976931348623157e+308",
		float64(1 << 53):     "9.007199254740992e+15", // exponent 15: scientific
	} {
		if got := formatFloat(f); got != want {
			t.Errorf("formatFloat(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestEncodeValueBinary(t *testing.T) {
	b, err := encodeValue(proxy.TypeDate, formatBinary, "1999-12-31")
	if err != nil || int32(binary.BigEndian.Uint32(b)) != -1 {
		t.Fatalf("date: %x %v", b, err)
	}
	b, err = encodeValue(proxy.TypeDateTime, formatBinary, "2000-01-01 00:00:01.25")
	if err != nil || int64(binary.BigEndian.Uint64(b)) != 1_250_000 {
		t.Fatalf("timestamp: %x %v", b, err)
	}
	// Far from 2000: no time.Duration overflow.
	b, err = encodeValue(proxy.TypeDate, formatBinary, "2500-01-01")
	if err != nil || int32(binary.BigEndian.Uint32(b)) != 182622 {
		t.Fatalf("date 2500: %d %v", int32(binary.BigEndian.Uint32(b)), err)
	}
	if _, err := encodeValue(proxy.TypeInt, formatText, 1.5); err == nil {
		t.Fatal("1.5 sent as a bigint")
	}
	if _, err := encodeValue(proxy.TypeDate, formatText, "yesterday"); err == nil {
		t.Fatal("a non-ISO date was sent")
	}
	if b, _ := encodeValue(proxy.TypeString, formatText, true); string(b) != "t" {
		t.Fatalf("bool as text: %q", b)
	}
}

func TestBinaryDecodingEdges(t *testing.T) {
	for us, want := range map[int64]string{
		-1:                 "1999-12-31 23:59:59.999999",
		0:                  "2000-01-01 00:00:00",
		math.MaxInt64:      "infinity",
		math.MinInt64:      "-infinity",
		-86400 * 1e6 * 365: "1999-01-01 00:00:00",
	} {
		if got := binaryTimestamp(us); got != want {
			t.Errorf("binaryTimestamp(%d) = %q, want %q", us, got, want)
		}
	}
	if got := binaryDate(math.MaxInt32); got != "infinity" {
		t.Errorf("binaryDate(max) = %q", got)
	}
	numeric := func(ndigits, weight, sign, dscale uint16, digits ...uint16) []byte {
		var b []byte
		for _, v := range append([]uint16{ndigits, weight, sign, dscale}, digits...) {
			b = binary.BigEndian.AppendUint16(b, v)
		}
		return b
	}
	for _, c := range []struct {
		in   []byte
		want float64
	}{
		{numeric(0, 0, 0, 0), 0},
		{numeric(1, 0, 0x4000, 0, 7), -7},
		{numeric(1, 0xffff, 0, 4, 5000), 0.5}, // weight -1
		{numeric(2, 2, 0, 0, 12, 3), 12_0003_0000},
		{numeric(0, 0, 0xD000, 0), math.Inf(1)},
	} {
		v, err := binaryNumeric(c.in)
		if err != nil || v.(float64) != c.want {
			t.Errorf("numeric %x = %v, %v; want %v", c.in, v, err, c.want)
		}
	}
	for _, bad := range [][]byte{nil, numeric(2, 0, 0, 0, 1), numeric(1, 0, 0x1234, 0, 1), numeric(1, 0, 0, 0, 10000)} {
		if _, err := binaryNumeric(bad); err == nil {
			t.Errorf("numeric %x accepted", bad)
		}
	}
}
