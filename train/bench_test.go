package train

import (
	"context"
	"testing"
)

// BenchmarkFitAdult trains on all of Adult (32,561 rows, 108 dimensions) with
// objective perturbation at ε = 1.
func BenchmarkFitAdult(b *testing.B) {
	d := adultData(b, 0)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Fit(context.Background(), d, Options{Epsilon: 1, Lambda: 1e-4}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadAdult streams all of Adult into a Data, as rows arriving from
// the backend would be.
func BenchmarkLoadAdult(b *testing.B) {
	rows, err := adultTrain()
	if err != nil {
		b.Fatal(err)
	}
	enc, err := NewEncoder(adultFeatures(b))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		d := NewData(enc, 0)
		for i, v := range rows.values {
			if err := d.Add(v, rows.labels[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
}
