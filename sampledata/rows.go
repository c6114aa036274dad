package sampledata

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// Rows streams the rows of the named table ("adult" or "pums") in file order.
// Each call of next returns one row, with one value per column: int64, float64
// or string as the column's Type says; after the last row it returns io.EOF.
// Adult's values are trimmed of their leading space; its missing values stay the
// string "?" (see the package comment). The rows are decompressed from memory as
// they are read, so nothing needs closing.
func Rows(name string) (cols []Column, next func() ([]any, error), err error) {
	src, err := lookup(name)
	if err != nil {
		return nil, nil, err
	}
	rc, err := open(src.file)
	if err != nil {
		return nil, nil, err
	}
	r := csv.NewReader(rc)
	r.TrimLeadingSpace = src.trim
	r.FieldsPerRecord = len(src.columns)
	r.ReuseRecord = true

	header, err := r.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("sampledata: read the header of %s: %w", src.file, err)
	}
	if want := columnNames(src.columns); !slices.Equal(header, want) {
		return nil, nil, fmt.Errorf("sampledata: %s has header %q, want %q", src.file, header, want)
	}

	cols = append([]Column(nil), src.columns...)
	done := false
	next = func() ([]any, error) {
		if done {
			return nil, io.EOF
		}
		record, err := r.Read()
		if errors.Is(err, io.EOF) {
			done = true
			return nil, io.EOF
		}
		if err != nil {
			done = true
			return nil, fmt.Errorf("sampledata: read %s: %w", src.file, err)
		}
		row, err := typed(record, cols)
		if err != nil {
			done = true
			line, _ := r.FieldPos(0)
			return nil, fmt.Errorf("sampledata: %s line %d: %w", src.file, line, err)
		}
		return row, nil
	}
	return cols, next, nil
}

// typed converts one CSV record to the column types.
func typed(record []string, cols []Column) ([]any, error) {
	row := make([]any, len(cols))
	for i, c := range cols {
		v := record[i]
		switch c.Type {
		case TypeInt:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("column %s: %q is not an integer: %w", c.Name, v, err)
			}
			row[i] = n
		case TypeFloat:
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("column %s: %q is not a number: %w", c.Name, v, err)
			}
			row[i] = f
		default:
			row[i] = v
		}
	}
	return row, nil
}

func columnNames(cols []Column) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return names
}
