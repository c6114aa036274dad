package mechanism

import (
	"fmt"
	"testing"
)

func BenchmarkLaplace(b *testing.B) {
	m, err := NewLaplace(1, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.AddNoise(42.5)
		}
	})
}

func BenchmarkLaplaceSerial(b *testing.B) {
	m, err := NewLaplace(1, 1)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		m.AddNoise(42.5)
	}
}

func BenchmarkLaplaceInt(b *testing.B) {
	m, err := NewLaplace(1, 1)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		m.AddNoiseInt(42)
	}
}

func BenchmarkGaussian(b *testing.B) {
	m, err := NewGaussian(1, 1e-6, 1)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		m.AddNoise(42.5)
	}
}

func BenchmarkGaussianInt(b *testing.B) {
	m, err := NewGaussian(1, 1e-6, 1)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		m.AddNoiseInt(42)
	}
}

func BenchmarkNewGaussian(b *testing.B) {
	for b.Loop() {
		if _, err := NewGaussian(1, 1e-6, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkQuantileMedian(b *testing.B) {
	for _, bins := range []int{100, 1000} {
		b.Run(fmt.Sprintf("bins=%d", bins), func(b *testing.B) {
			q, err := NewQuantile(1, 0, 100, bins, 1)
			if err != nil {
				b.Fatal(err)
			}
			counts := make([]int64, bins)
			for i := range counts {
				counts[i] = int64(i % 7 * 10)
			}
			for b.Loop() {
				if _, err := q.Release(counts, 0.5); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
