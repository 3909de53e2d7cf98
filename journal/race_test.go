//go:build race

package journal_test

// raceEnabled scales the fault-injection suite down under the race
// detector, which makes every request several times slower; the full 1000
// attempts run in the plain test run.
const raceEnabled = true
