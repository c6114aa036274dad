package mechanism

import "testing"

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
