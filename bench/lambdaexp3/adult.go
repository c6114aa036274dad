package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/sampledata"
	"github.com/dpproxy/dpproxy/train"
)

// adultBounds are the public bounds of demo/policy.yaml.
var adultBounds = map[string][2]float64{
	"age": {17, 90}, "education_num": {1, 16}, "capital_gain": {0, 99999},
	"capital_loss": {0, 4356}, "hours_per_week": {1, 99},
}

// adultMissing are the columns whose public values include "?" in the policy.
var adultMissing = []string{"workclass", "occupation", "native_country"}

// features describes every Adult column but fnlwgt and the label as the demo
// policy does.
func features() ([]train.Feature, error) {
	cols, _, err := sampledata.Rows("adult")
	if err != nil {
		return nil, err
	}
	var fs []train.Feature
	for _, c := range cols {
		switch {
		case c.Name == "fnlwgt" || c.Name == "income":
		case c.Type == sampledata.TypeInt:
			b := adultBounds[c.Name]
			fs = append(fs, train.Feature{Name: c.Name, Numeric: true, Lower: b[0], Upper: b[1]})
		default:
			cats := slices.Clone(sampledata.AdultCategories[c.Name])
			if slices.Contains(adultMissing, c.Name) {
				cats = append(cats, "?")
			}
			fs = append(fs, train.Feature{Name: c.Name, Categories: cats})
		}
	}
	return fs, nil
}

// split holds feature rows and their labels (income > 50K).
type split struct {
	values [][]any
	labels []bool
}

func trainSplit() (split, error) {
	cols, next, err := sampledata.Rows("adult")
	if err != nil {
		return split{}, err
	}
	var out split
	for {
		row, err := next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return split{}, err
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
}

// testSplit reads adult_test, whose labels carry a trailing period.
func testSplit() (split, error) {
	rc, err := sampledata.AdultTest()
	if err != nil {
		return split{}, err
	}
	defer rc.Close()
	r := csv.NewReader(rc)
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err != nil {
		return split{}, fmt.Errorf("read the test split's header: %w", err)
	}
	var out split
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return split{}, fmt.Errorf("read the test split: %w", err)
		}
		var vals []any
		var label bool
		for i, name := range header {
			switch _, numeric := adultBounds[name]; {
			case name == "fnlwgt":
			case name == "income":
				label = strings.TrimSuffix(rec[i], ".") == ">50K"
			case numeric:
				v, err := strconv.ParseInt(rec[i], 10, 64)
				if err != nil {
					return split{}, fmt.Errorf("test split column %s: %w", name, err)
				}
				vals = append(vals, v)
			default:
				vals = append(vals, rec[i])
			}
		}
		out.values = append(out.values, vals)
		out.labels = append(out.labels, label)
	}
}

// accuracy scores the model on s using only its released weights on the
// original scale, as a user would in any tool:
// 1/(1+exp(−(intercept + Σ weight·value))), numeric values clamped to their
// public bounds, a categorical value adding the weight of "name=value".
func accuracy(m *train.Model, s split) float64 {
	weight := make(map[string]float64, len(m.Features))
	for j, name := range m.Features {
		weight[name] = m.Weights[j]
	}
	right := 0
	for i, row := range s.values {
		score := weight[train.InterceptName]
		for k, f := range m.Inputs {
			switch v := row[k].(type) {
			case int64:
				score += weight[f.Name] * min(max(float64(v), f.Lower), f.Upper)
			case string:
				score += weight[f.Name+"="+v]
			}
		}
		if (1/(1+math.Exp(-score)) > 0.5) == s.labels[i] {
			right++
		}
	}
	return float64(right) / float64(len(s.values))
}
