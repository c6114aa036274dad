package warm
import (
 _ "vitess.io/vitess/go/mysql"
 _ "github.com/pingcap/tidb/pkg/parser"
 _ "github.com/pingcap/tidb/pkg/parser/test_driver"
 _ "github.com/dgraph-io/badger/v4"
 _ "modernc.org/sqlite"
 _ "github.com/go-sql-driver/mysql"
 _ "github.com/goccy/go-yaml"
)

import (
 _ "gonum.org/v1/gonum/optimize"
 _ "gonum.org/v1/gonum/stat/distuv"
 _ "github.com/pingcap/tidb/pkg/parser/ast"
 _ "github.com/pingcap/tidb/pkg/parser/format"
 _ "vitess.io/vitess/go/sqltypes"
)
