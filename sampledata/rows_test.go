package sampledata

import (
	"bufio"
	"encoding/csv"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestTablesCountsTheFiles(t *testing.T) {
	want := map[string]struct {
		rows    int
		columns int
	}{
		"adult":            {32561, 15},
		"pums":             {1948, 7},
		"pums_person":      {1000, 7},
		"education_levels": {16, 4},
	}
	tables := Tables()
	if len(tables) != len(want) {
		t.Fatalf("Tables() returned %d tables, want %d", len(tables), len(want))
	}
	for _, tb := range tables {
		w, ok := want[tb.Name]
		if !ok {
			t.Errorf("unexpected table %q", tb.Name)
			continue
		}
		if tb.RowCount != w.rows || len(tb.Columns) != w.columns {
			t.Errorf("%s: %d rows and %d columns, want %d and %d", tb.Name, tb.RowCount, len(tb.Columns), w.rows, w.columns)
		}
	}
}

func TestRowsTypesAndTrimsValues(t *testing.T) {
	cols, next, err := Rows("adult")
	if err != nil {
		t.Fatal(err)
	}
	if got := columnNames(cols); got[0] != "age" || got[14] != "income" {
		t.Fatalf("adult columns = %v", got)
	}
	first, err := next()
	if err != nil {
		t.Fatal(err)
	}
	want := []any{int64(39), "State-gov", int64(77516), "Bachelors", int64(13), "Never-married",
		"Adm-clerical", "Not-in-family", "White", "Male", int64(2174), int64(0), int64(40),
		"United-States", "<=50K"}
	if !reflect.DeepEqual(first, want) {
		t.Errorf("first adult row =\n %#v\nwant\n %#v", first, want)
	}

	_, next, err = Rows("pums")
	if err != nil {
		t.Fatal(err)
	}
	first, err = next()
	if err != nil {
		t.Fatal(err)
	}
	if want := []any{int64(59), int64(1), int64(9), int64(1), int64(0), int64(1), int64(1)}; !reflect.DeepEqual(first, want) {
		t.Errorf("first pums row = %#v, want %#v", first, want)
	}
}

func TestRowsEndsWithEOFAndStaysThere(t *testing.T) {
	_, next, err := Rows("pums")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		_, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1948 {
		t.Errorf("pums streamed %d rows, want 1948", n)
	}
	if _, err := next(); !errors.Is(err, io.EOF) {
		t.Errorf("next after the end = %v, want io.EOF", err)
	}
}

func TestRowsRejectsUnknownTable(t *testing.T) {
	if _, _, err := Rows("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("Rows(nope) error = %v, want one naming the table", err)
	}
}

func TestTypedNamesTheBadColumn(t *testing.T) {
	cols := []Column{{"a", TypeInt}, {"b", TypeFloat}}
	if _, err := typed([]string{"1", "x"}, cols); err == nil || !strings.Contains(err.Error(), "column b") {
		t.Errorf("typed error = %v, want one naming column b", err)
	}
	row, err := typed([]string{"-3", "2.5"}, cols)
	if err != nil || row[0] != int64(-3) || row[1] != 2.5 {
		t.Errorf("typed = %v, %v", row, err)
	}
}

// TestAdultCategoriesMatchTheDescription parses the embedded adult.names, so the
// literal map cannot drift from the data set's own documentation.
func TestAdultCategoriesMatchTheDescription(t *testing.T) {
	rc, err := open("adult.names")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	parsed := map[string][]string{}
	s := bufio.NewScanner(rc)
	for s.Scan() {
		line := s.Text()
		// The class line is ">50K, <=50K." and the attribute lines are
		// "name: v1, v2, ... ." or "name: continuous.".
		if strings.HasPrefix(line, ">50K") {
			parsed["income"] = splitValues(line)
			continue
		}
		name, values, ok := strings.Cut(line, ": ")
		if !ok || strings.HasPrefix(name, "|") || strings.Contains(name, " ") || values == "continuous." {
			continue
		}
		parsed[strings.ReplaceAll(name, "-", "_")] = splitValues(values)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(parsed, AdultCategories) {
		t.Errorf("adult.names declares\n %v\nAdultCategories has\n %v", parsed, AdultCategories)
	}
}

func splitValues(s string) []string {
	var out []string
	for _, v := range strings.Split(strings.TrimSuffix(s, "."), ",") {
		out = append(out, strings.TrimSpace(v))
	}
	return out
}

// TestAdultValuesOutsideCategories pins what the package comment promises: the
// only value outside the public categories is the missing marker "?", in the
// three columns named there.
func TestAdultValuesOutsideCategories(t *testing.T) {
	cols, next, err := Rows("adult")
	if err != nil {
		t.Fatal(err)
	}
	outside := map[string]map[string]int{}
	for {
		row, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cols {
			cats, ok := AdultCategories[c.Name]
			if !ok {
				continue
			}
			if v := row[i].(string); !slices.Contains(cats, v) {
				if outside[c.Name] == nil {
					outside[c.Name] = map[string]int{}
				}
				outside[c.Name][v]++
			}
		}
	}
	want := map[string]map[string]int{
		"workclass":      {"?": 1836},
		"occupation":     {"?": 1843},
		"native_country": {"?": 583},
	}
	if !reflect.DeepEqual(outside, want) {
		t.Errorf("values outside AdultCategories = %v, want %v", outside, want)
	}
}

func TestAdultTestIsTheOriginalCSV(t *testing.T) {
	rc, err := AdultTest()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	records, err := csv.NewReader(rc).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 16282 {
		t.Fatalf("adult test split has %d lines, want 16,281 rows + header", len(records))
	}
	if records[0][14] != "income" || records[1][14] != " <=50K." {
		t.Errorf("header income column %q, first label %q", records[0][14], records[1][14])
	}
}
