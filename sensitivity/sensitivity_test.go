package sensitivity

import (
	"math"
	"testing"
)

func TestSensitivities(t *testing.T) {
	c := Contribution{MaxRows: 2, MaxGroups: 4}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		got    Sensitivity
		l1, l2 float64
	}{
		{"count", Count(c), 8, 4},
		{"sum [0,100]", Sum(0, 100, c), 800, 400},
		{"sum [-300,100]", Sum(-300, 100, c), 2400, 1200},
		{"centered [17,90]", CenteredSum(17, 90, c), 4 * 2 * 36.5, 2 * 2 * 36.5},
		{"distinct units", DistinctUnits(c), 4, 2},
	}
	for _, tc := range cases {
		if math.Abs(tc.got.L1-tc.l1) > 1e-9 || math.Abs(tc.got.L2-tc.l2) > 1e-9 {
			t.Errorf("%s: got L1=%v L2=%v, want %v %v", tc.name, tc.got.L1, tc.got.L2, tc.l1, tc.l2)
		}
	}
	if err := (Contribution{MaxRows: 0, MaxGroups: 1}).Validate(); err == nil {
		t.Error("zero rows per unit accepted")
	}
}
