package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/dpproxy/dpproxy/train"
)

func main() {
	ctx := context.Background()
	fs, _ := features()
	enc, _ := train.NewEncoder(fs)
	all, _ := trainSplit()
	test, _ := testSplit()
	runs := 15
	for _, n := range []int{1000, 5000, 32561} {
		d := train.NewData(enc, 0)
		for i := range n {
			d.Add(all.values[i], all.labels[i])
		}
		for _, eps := range []float64{0.01, 0.1, 1} {
			med := func(o train.Options) (float64, []float64) {
				var accs, ls []float64
				for range runs {
					m, err := train.Fit(ctx, d, o)
					if err != nil {
						panic(err)
					}
					accs = append(accs, accuracy(m, test))
					ls = append(ls, m.Lambda)
				}
				slices.Sort(accs)
				return accs[len(accs)/2], ls
			}
			a1, l1 := med(train.Options{Epsilon: eps})
			a2, l2 := med(train.Options{Epsilon: eps, AutoLambda: true})
			a3, _ := med(train.Options{Epsilon: eps, Method: train.MethodOutput})
			fmt.Printf("n=%d eps=%v default %.3f (λ %.3g) auto %.3f (λ %.3g..%.3g) output %.3f\n", n, eps, a1, l1[0], a2, slices.Min(l2), slices.Max(l2), a3)
		}
	}
}
