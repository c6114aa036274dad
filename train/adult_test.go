package train

import (
	"encoding/csv"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dpproxy/dpproxy/sampledata"
)

// adultBounds are the public bounds of demo/policy.yaml.
var adultBounds = map[string][2]float64{
	"age": {17, 90}, "education_num": {1, 16}, "capital_gain": {0, 99999},
	"capital_loss": {0, 4356}, "hours_per_week": {1, 99},
}

// adultMissing are the columns whose public values include "?" in the policy.
var adultMissing = []string{"workclass", "occupation", "native_country"}

// adultFeatures returns every Adult column but fnlwgt and the label, as the
// demo policy describes them (about 107 encoded dimensions).
func adultFeatures(t testing.TB) []Feature {
	cols, _, err := sampledata.Rows("adult")
	if err != nil {
		t.Fatal(err)
	}
	var fs []Feature
	for _, c := range cols {
		switch {
		case c.Name == "fnlwgt" || c.Name == "income":
		case c.Type == sampledata.TypeInt:
			b := adultBounds[c.Name]
			fs = append(fs, Feature{Name: c.Name, Numeric: true, Lower: b[0], Upper: b[1]})
		default:
			cats := slices.Clone(sampledata.AdultCategories[c.Name])
			if slices.Contains(adultMissing, c.Name) {
				cats = append(cats, "?")
			}
			fs = append(fs, Feature{Name: c.Name, Categories: cats})
		}
	}
	return fs
}

type adultRows struct {
	values [][]any
	labels []bool
}

// adultTrain and adultTest hold the Adult splits as feature rows.
var adultTrain = sync.OnceValues(func() (adultRows, error) {
	cols, next, err := sampledata.Rows("adult")
	if err != nil {
		return adultRows{}, err
	}
	var out adultRows
	for {
		row, err := next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return adultRows{}, err
		}
		var vals []any
		var label bool
		for i, c := range cols {
			switch c.Name {
			case "fnlwgt":
			case "income":
				label = row[i] == ">50K"
			default:
				vals = append(vals, row[i])
			}
		}
		out.values = append(out.values, vals)
		out.labels = append(out.labels, label)
	}
})

var adultTest = sync.OnceValues(func() (adultRows, error) {
	rc, err := sampledata.AdultTest()
	if err != nil {
		return adultRows{}, err
	}
	defer rc.Close()
	r := csv.NewReader(rc)
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err != nil {
		return adultRows{}, err
	}
	var out adultRows
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return adultRows{}, err
		}
		var vals []any
		var label bool
		for i, name := range header {
			switch {
			case name == "fnlwgt":
			case name == "income":
				label = strings.TrimSuffix(rec[i], ".") == ">50K"
			case adultBounds[name] != [2]float64{}:
				v, err := strconv.ParseInt(rec[i], 10, 64)
				if err != nil {
					return adultRows{}, err
				}
				vals = append(vals, v)
			default:
				vals = append(vals, rec[i])
			}
		}
		out.values = append(out.values, vals)
		out.labels = append(out.labels, label)
	}
})

// adultData returns the first limit rows of Adult's training split (all when
// limit ≤ 0) as Data.
func adultData(t testing.TB, limit int) *Data {
	t.Helper()
	rows, err := adultTrain()
	if err != nil {
		t.Fatal(err)
	}
	enc, err := NewEncoder(adultFeatures(t))
	if err != nil {
		t.Fatal(err)
	}
	d := NewData(enc, 0)
	for i, v := range rows.values {
		if limit > 0 && i == limit {
			break
		}
		if err := d.Add(v, rows.labels[i]); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// testAccuracy returns the model's accuracy on Adult's test split.
func testAccuracy(t testing.TB, m *Model) float64 {
	t.Helper()
	rows, err := adultTest()
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Predictor()
	if err != nil {
		t.Fatal(err)
	}
	right := 0
	for i, v := range rows.values {
		prob, err := p.Predict(v)
		if err != nil {
			t.Fatal(err)
		}
		if (prob > 0.5) == rows.labels[i] {
			right++
		}
	}
	return float64(right) / float64(len(rows.values))
}

func TestAdultFeatures(t *testing.T) {
	d := adultData(t, 0)
	if d.Len() != 32561 {
		t.Errorf("Adult has %d training rows, want 32561", d.Len())
	}
	if got := d.enc.Dim(); got < 100 || got > 110 {
		t.Errorf("Adult encodes to %d dimensions, want about 107", got)
	}
	if math.Abs(float64(d.Bytes())-37*32561) > 0 {
		t.Errorf("Adult takes %d bytes, want 37 a row", d.Bytes())
	}
}
