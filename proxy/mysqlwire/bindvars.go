package mysqlwire

import (
	"fmt"
	"math"
	"strconv"

	"vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/sqltypes"
	querypb "vitess.io/vitess/go/vt/proto/query"

	"github.com/dpproxy/dpproxy/proxy"
)

// bindArgs lists a COM_STMT_EXECUTE's parameters in order. vitess decodes
// the binary protocol into prepare.BindVars named v1..vN.
func bindArgs(prepare *mysql.PrepareData) ([]proxy.Value, error) {
	args := make([]proxy.Value, prepare.ParamsCount)
	for i := range args {
		name := "v" + strconv.Itoa(i+1)
		bv, ok := prepare.BindVars[name]
		if !ok || bv == nil {
			return nil, fmt.Errorf("mysqlwire: parameter %d of %d was not sent", i+1, len(args))
		}
		v, err := bindValue(bv)
		if err != nil {
			return nil, fmt.Errorf("mysqlwire: parameter %d: %w", i+1, err)
		}
		args[i] = v
	}
	return args, nil
}

// bindValue converts one parameter to the engine's value types: integers to
// int64 (an unsigned one past MaxInt64 to float64, the nearest the engine can
// represent), floats and decimals to float64, NULL to nil, and everything
// else (text, blobs, dates as the client wrote them) to a string.
func bindValue(bv *querypb.BindVariable) (proxy.Value, error) {
	v, err := sqltypes.BindVariableToValue(bv)
	if err != nil {
		return nil, err
	}
	switch {
	case v.IsNull():
		return nil, nil
	case v.IsSigned():
		return v.ToInt64()
	case v.IsUnsigned():
		u, err := v.ToUint64()
		if err != nil {
			return nil, err
		}
		if u > math.MaxInt64 {
			return float64(u), nil
		}
		return int64(u), nil
	case v.IsFloat(), v.IsDecimal():
		f, err := strconv.ParseFloat(v.ToString(), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", v.ToString())
		}
		return f, nil
	}
	return v.ToString(), nil
}
