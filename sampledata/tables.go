package sampledata

import (
	"fmt"
	"io"
	"sync"
)

// Column types.
const (
	TypeInt    = "int"    // values are int64
	TypeFloat  = "float"  // values are float64
	TypeString = "string" // values are string
)

// Table describes one embedded data set as a table.
type Table struct {
	Name     string
	Columns  []Column
	RowCount int // rows in the file, header excluded
}

// Column is one column of a Table, in file order.
type Column struct {
	Name string
	Type string // TypeInt, TypeFloat or TypeString
}

// source ties a table to its embedded CSV file and declares the column types.
// The names must equal the file's header line, which Rows checks.
type source struct {
	name string
	file string
	// trim removes the space UCI's files keep after each comma.
	trim    bool
	columns []Column
}

var sources = []source{
	// education_levels is public: the mapping of Adult's education
	// categories to their ordinal (both listed in adult.names) with a
	// coarse level and typical years of schooling added by dpproxy, so that
	// the demo has a public table to join.
	{
		name: "education_levels",
		file: "education_levels.csv",
		columns: []Column{
			{"education_num", TypeInt},
			{"education", TypeString},
			{"level", TypeString},
			{"years", TypeInt},
		},
	},
	{
		name: "adult",
		file: "adult_train.csv",
		trim: true,
		columns: []Column{
			{"age", TypeInt},
			{"workclass", TypeString},
			{"fnlwgt", TypeInt},
			{"education", TypeString},
			{"education_num", TypeInt},
			{"marital_status", TypeString},
			{"occupation", TypeString},
			{"relationship", TypeString},
			{"race", TypeString},
			{"sex", TypeString},
			{"capital_gain", TypeInt},
			{"capital_loss", TypeInt},
			{"hours_per_week", TypeInt},
			{"native_country", TypeString},
			{"income", TypeString},
		},
	},
	{
		name: "pums",
		file: "PUMS_dup.csv",
		columns: []Column{
			{"age", TypeInt},
			{"sex", TypeInt},
			{"educ", TypeInt},
			{"race", TypeInt},
			{"income", TypeInt},
			{"married", TypeInt},
			{"pid", TypeInt},
		},
	},
	// pums_person is the same sample with one row per person (PUMS_pid.csv):
	// joined with pums on pid, it shows joins of two private tables on
	// their privacy unit.
	{
		name: "pums_person",
		file: "PUMS_pid.csv",
		columns: []Column{
			{"age", TypeInt},
			{"sex", TypeInt},
			{"educ", TypeInt},
			{"race", TypeInt},
			{"income", TypeFloat},
			{"married", TypeInt},
			{"pid", TypeInt},
		},
	},
}

func lookup(name string) (source, error) {
	for _, s := range sources {
		if s.name == name {
			return s, nil
		}
	}
	return source{}, fmt.Errorf("sampledata: no table %q (have adult, pums, pums_person, education_levels)", name)
}

// rowCounts counts each file's rows once, on first use: the counts come from the
// embedded files themselves, so they cannot drift from the data.
var rowCounts = sync.OnceValues(func() (map[string]int, error) {
	counts := make(map[string]int, len(sources))
	for _, s := range sources {
		_, next, err := Rows(s.name)
		if err != nil {
			return nil, err
		}
		n := 0
		for {
			_, err := next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			n++
		}
		counts[s.name] = n
	}
	return counts, nil
})

// Tables lists the embedded tables. It panics if an embedded file is corrupt,
// which the package's tests rule out for the files shipped in the binary.
func Tables() []Table {
	counts, err := rowCounts()
	if err != nil {
		panic(err)
	}
	tables := make([]Table, 0, len(sources))
	for _, s := range sources {
		tables = append(tables, Table{
			Name:     s.name,
			Columns:  append([]Column(nil), s.columns...),
			RowCount: counts[s.name],
		})
	}
	return tables
}
