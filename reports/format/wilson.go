package format

import "github.com/sandcheck/sandcheck/reports/stats"

func wilsonOf(k, n int) [2]float64 {
	iv := stats.Wilson(k, n)
	return [2]float64{iv.Low, iv.High}
}
