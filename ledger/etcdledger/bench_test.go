package etcdledger

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/dpproxy/dpproxy/ledger"
)

var unlimited = ledger.Limits{User: ledger.Budget{Epsilon: math.Inf(1), Delta: 0.5}}

func BenchmarkEtcdChargeSerial(b *testing.B) {
	l := openTest(b, fmt.Sprintf("%s-%d", b.Name(), b.N))
	ctx := context.Background()
	c := ledger.Charge{User: "alice", Role: "analyst", Statement: "SELECT COUNT(*) FROM t", Mechanism: "laplace", Epsilon: 0.01}
	for b.Loop() {
		if _, err := l.Charge(ctx, c, unlimited); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "charges/s")
}

// BenchmarkEtcdChargeParallel64 charges 64 users from 64 goroutines.
func BenchmarkEtcdChargeParallel64(b *testing.B) {
	l := openTest(b, fmt.Sprintf("%s-%d", b.Name(), b.N))
	var next atomic.Int64
	b.SetParallelism((64 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.RunParallel(func(pb *testing.PB) {
		c := ledger.Charge{User: fmt.Sprintf("user%d", next.Add(1)), Role: "analyst",
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
