package exgate

import (
	"testing"
	"time"
)

func TestIntervalPrevious(t *testing.T) {
	at := time.Date(2024, time.March, 31, 17, 42, 0, 0, time.UTC)
	ivs := []Interval{Interval1M}
	for iv := range intervalDurations {
		ivs = append(ivs, iv)
	}
	for _, iv := range ivs {
		start := iv.Start(at)
		prev := iv.Previous(start)
		if iv.Next(prev) != start || !prev.Before(start) || iv.Start(prev) != prev {
			t.Errorf("%s: Previous(%s) = %s, not the interval before", iv, start, prev)
		}
	}
	if got := Interval1M.Previous(time.Date(2024, time.March, 1, 0, 0, 0, 0, time.UTC)); !got.Equal(time.Date(2024, time.February, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("1M before March: %s", got)
	}
}
