package pgwire

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dpproxy/dpproxy/proxy"
)

const stateBadEncoding = "22021" // character_not_in_repertoire

// bindArgs decodes a Bind message's parameters by the types the statement
// declares (oids; 0 or a missing entry: unspecified, taken as text).
// Values become the engine's types: integers int64, float4/float8/numeric
// float64, bool bool, NULL nil, and everything else a string; dates and
// timestamps sent in binary become ISO strings, in text are passed on as
// the client wrote them.
func bindArgs(oids []uint32, formats []int16, params [][]byte) ([]proxy.Value, error) {
	n := len(params)
	switch len(formats) {
	case 0, 1, n:
	default:
		return nil, errorf(stateProtocol, "bind message has %d parameter formats but %d parameters", len(formats), n)
	}
	args := make([]proxy.Value, n)
	for i, p := range params {
		format := int16(formatText)
		switch len(formats) {
		case 1:
			format = formats[0]
		case n:
			format = formats[i]
		}
		var oid uint32
		if i < len(oids) {
			oid = oids[i]
		}
		v, err := decodeParam(oid, format, p)
		if err != nil {
			if pe, ok := err.(*pgError); ok {
				pe.msg += " (parameter $" + strconv.Itoa(i+1) + ")"
				return nil, pe
			}
			return nil, err
		}
		args[i] = v
	}
	return args, nil
}

// decodeParam decodes one parameter; nil bytes are NULL.
func decodeParam(oid uint32, format int16, b []byte) (proxy.Value, error) {
	if b == nil {
		return nil, nil
	}
	switch format {
	case formatText:
		return decodeText(oid, b)
	case formatBinary:
		return decodeBinary(oid, b)
	}
	return nil, errorf(stateProtocol, "unsupported format code: %d", format)
}

func decodeText(oid uint32, b []byte) (proxy.Value, error) {
	if !utf8.Valid(b) {
		return nil, errorf(stateBadEncoding, "invalid byte sequence for encoding \"UTF8\"")
	}
	s := string(b)
	switch oid {
	case oidInt2, oidInt4, oidInt8:
		i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, errorf(stateInvalidText, "invalid input syntax for type integer: %q", s)
		}
		return i, nil
	case oidFloat4, oidFloat8, oidNumeric:
		// ParseFloat also reads PostgreSQL's NaN, Infinity and -Infinity.
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, errorf(stateInvalidText, "invalid input syntax for type double precision: %q", s)
		}
		return f, nil
	case oidBool:
		// boolin's spellings (without its unique-prefix forms).
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "t", "true", "y", "yes", "on", "1":
			return true, nil
		case "f", "false", "n", "no", "off", "0":
			return false, nil
		}
		return nil, errorf(stateInvalidText, "invalid input syntax for type boolean: %q", s)
	}
	return s, nil
}

func decodeBinary(oid uint32, b []byte) (proxy.Value, error) {
	size := func(n int) error {
		if len(b) != n {
			return errorf(stateInvalidBinary, "incorrect binary data format: %d bytes for a value of type %d", len(b), oid)
		}
		return nil
	}
	switch oid {
	case oidInt2:
		if err := size(2); err != nil {
			return nil, err
		}
		return int64(int16(binary.BigEndian.Uint16(b))), nil
	case oidInt4:
		if err := size(4); err != nil {
			return nil, err
		}
		return int64(int32(binary.BigEndian.Uint32(b))), nil
	case oidInt8:
		if err := size(8); err != nil {
			return nil, err
		}
		return int64(binary.BigEndian.Uint64(b)), nil
	case oidFloat4:
		if err := size(4); err != nil {
			return nil, err
		}
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b))), nil
	case oidFloat8:
		if err := size(8); err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
	case oidBool:
		if err := size(1); err != nil {
			return nil, err
		}
		return b[0] != 0, nil
	case oidDate:
		if err := size(4); err != nil {
			return nil, err
		}
		return binaryDate(int32(binary.BigEndian.Uint32(b))), nil
	case oidTimestamp:
		if err := size(8); err != nil {
			return nil, err
		}
		return binaryTimestamp(int64(binary.BigEndian.Uint64(b))), nil
	case oidNumeric:
		return binaryNumeric(b)
	case 0, oidText, oidVarchar, oidBPChar, oidUnknown:
		if !utf8.Valid(b) {
			return nil, errorf(stateBadEncoding, "invalid byte sequence for encoding \"UTF8\"")
		}
		return string(b), nil
	}
	return nil, errorf(stateUnsupported, "binary format of parameter type %d is not supported; send it as text", oid)
}

// binaryDate is the ISO form of a binary date: days since 2000-01-01, with
// the extremes of int32 meaning ±infinity (date_recv).
func binaryDate(days int32) string {
	switch days {
	case math.MaxInt32:
		return "infinity"
	case math.MinInt32:
		return "-infinity"
	}
	return pgEpoch.AddDate(0, 0, int(days)).Format(time.DateOnly)
}

// binaryTimestamp is the ISO form of a binary timestamp: microseconds since
// 2000-01-01 00:00:00, with the extremes of int64 meaning ±infinity.
func binaryTimestamp(us int64) string {
	switch us {
	case math.MaxInt64:
		return "infinity"
	case math.MinInt64:
		return "-infinity"
	}
	sec, frac := us/1e6, us%1e6
	if frac < 0 {
		sec, frac = sec-1, frac+1e6
	}
	return time.Unix(pgEpoch.Unix()+sec, frac*1e3).UTC().Format("2006-01-02 15:04:05.999999")
}

// binaryNumeric decodes numeric_send's form: ndigits, weight, sign and
// dscale as int16, then ndigits base-10000 digits, the first of weight
// 10000^weight. The value becomes a float64, as the engine computes.
func binaryNumeric(b []byte) (proxy.Value, error) {
	bad := errorf(stateInvalidBinary, "incorrect binary data format for a numeric")
	if len(b) < 8 {
		return nil, bad
	}
	ndigits := int(binary.BigEndian.Uint16(b))
	weight := int(int16(binary.BigEndian.Uint16(b[2:])))
	sign := binary.BigEndian.Uint16(b[4:])
	if len(b) != 8+2*ndigits {
		return nil, bad
	}
	const (
		numericPos  = 0x0000
		numericNeg  = 0x4000
		numericNaN  = 0xC000
		numericPInf = 0xD000
		numericNInf = 0xF000
	)
	switch sign {
	case numericNaN:
		return math.NaN(), nil
	case numericPInf:
		return math.Inf(1), nil
	case numericNInf:
		return math.Inf(-1), nil
	case numericPos, numericNeg:
	default:
		return nil, bad
	}
	// Build the decimal text and let ParseFloat round it once, correctly.
	var sb strings.Builder
	if sign == numericNeg {
		sb.WriteByte('-')
	}
	sb.WriteString("0.")
	for i := range ndigits {
		d := binary.BigEndian.Uint16(b[8+2*i:])
		if d > 9999 {
			return nil, bad
		}
		sb.WriteString(strconv.FormatUint(uint64(d)+10000, 10)[1:])
	}
	sb.WriteString("e")
	sb.WriteString(strconv.Itoa(4 * (weight + 1)))
	f, err := strconv.ParseFloat(sb.String(), 64)
	if err != nil && !isRangeErr(err) {
		return nil, bad
	}
	return f, nil
}

// isRangeErr: ParseFloat returns ±Inf or 0 with ErrRange, which is the
// nearest float64 and fine here.
func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
