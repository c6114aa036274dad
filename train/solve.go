package train

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/optimize"
)

// minimise returns w with ‖∇J(w)‖₂ ≤ gamma. The objective is smooth and
// strongly convex, so Newton's method (the sparse linear design, whose Hessian
// costs rows × nonzeros²) or L-BFGS (dense random features) converges to any
// gradient norm above the floating-point floor. The caller calibrates the
// extra output noise of approximate minimum perturbation to gamma, which is
// why gamma is fixed before the data are seen and reaching it is checked
// rather than assumed.
func minimise(ctx context.Context, o *objective, gamma float64) ([]float64, error) {
	dim := o.d.dim()
	p := optimize.Problem{
		Func: o.value,
		Grad: o.grad,
		Status: func() (optimize.Status, error) {
			if err := ctx.Err(); err != nil {
				return optimize.Failure, err
			}
			return optimize.NotTerminated, nil
		},
	}
	var method optimize.Method
	iterations := 200
	if _, dense := o.d.(denseDesign); dense {
		method = &optimize.LBFGS{Store: 30}
		iterations = 20000
	} else {
		p.Hess = o.hess
		method = &optimize.Newton{GradStopThreshold: math.NaN()}
	}
	settings := &optimize.Settings{
		// GradientThreshold bounds the infinity norm; ‖g‖₂ ≤ √dim·‖g‖∞.
		GradientThreshold: gamma / math.Sqrt(float64(dim)),
		Converger:         optimize.NeverTerminate{},
		MajorIterations:   iterations,
	}
	v := make([]float64, dim)
	g := make([]float64, dim)
	// A line search can stall in rounding before the gradient is small
	// enough; restarting from where it stopped resets its state.
	const restarts = 5
	for attempt := 0; ; attempt++ {
		res, err := optimize.Minimize(p, v, settings, method)
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("train: minimisation stopped: %w", cerr)
		}
		if res == nil {
			return nil, fmt.Errorf("train: minimisation failed: %w", err)
		}
		v = res.X
		o.grad(g, v)
		norm := floats.Norm(g, 2)
		if norm <= gamma {
			return o.weights(v), nil
		}
		if attempt == restarts || res.Status == optimize.IterationLimit {
			return nil, fmt.Errorf("train: minimisation reached gradient norm %.3g, not the %.3g the privacy guarantee needs (status %v, %d iterations)", norm, gamma, res.Status, res.MajorIterations)
		}
	}
}
