package ledger

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"testing"
)

// The benchmarks run on a real on-disk ledger with synchronous writes: every
// charge is synced before Charge returns. Concurrent charges share syncs
// through the ledger's group commit (commit.go).

var unlimited = Limits{User: Budget{Epsilon: math.Inf(1), Delta: 1}}

func BenchmarkChargeSerial(b *testing.B) {
	l := openTemp(b)
	ctx := context.Background()
	c := Charge{User: "alice", Role: "analyst", Statement: "SELECT COUNT(*) FROM t", Mechanism: "laplace", Epsilon: 0.01}
	for b.Loop() {
		if _, err := l.Charge(ctx, c, unlimited); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "charges/s")
}

// parallel64 makes RunParallel use 64 goroutines whatever GOMAXPROCS is.
func parallel64(b *testing.B) {
	b.SetParallelism((64 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
}

func BenchmarkChargeParallel64(b *testing.B) {
	l := openTemp(b)
	var next atomic.Int64
	parallel64(b)
	b.RunParallel(func(pb *testing.PB) {
		c := Charge{User: fmt.Sprintf("user%d", next.Add(1)), Role: "analyst",
			Statement: "SELECT COUNT(*) FROM t", Mechanism: "laplace", Epsilon: 0.01}
		for pb.Next() {
			if _, err := l.Charge(context.Background(), c, unlimited); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "charges/s")
}

// BenchmarkChargeParallel64OneUser is the worst case: 64 goroutines charging
// one user, whose charges must be serialised.
func BenchmarkChargeParallel64OneUser(b *testing.B) {
	l := openTemp(b)
	parallel64(b)
	c := Charge{User: "alice", Role: "analyst", Mechanism: "laplace", Epsilon: 0.01}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Charge(context.Background(), c, unlimited); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "charges/s")
}
