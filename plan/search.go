package plan

import "math"

// Step runs the load of one scale (a node count) and says whether it held the SLO.
type Step func(scale int) (ok bool, err error)

// Search finds the largest scale whose step holds, between 1 and limit. From
// start it doubles while steps hold (the last step is limit itself), or halves
// while they break; then it bisects between the last scale that held and the
// first that broke, at most bisections times and while they are more than
// resolution apart (relative). good is 0 when no scale held; bad is 0 when none
// broke (the knee is at least limit).
func Search(start, limit, bisections int, resolution float64, step Step) (good, bad int, err error) {
	start = min(max(start, 1), limit)
	ok, err := step(start)
	if err != nil {
		return 0, 0, err
	}
	if ok {
		good = start
		for good < limit {
			next := min(good*2, limit)
			if ok, err = step(next); err != nil {
				return good, 0, err
			}
			if !ok {
				bad = next
				break
			}
			good = next
		}
	} else {
		bad = start
		for bad > 1 {
			next := bad / 2
			if ok, err = step(next); err != nil {
				return 0, bad, err
			}
			if ok {
				good = next
				break
			}
			bad = next
		}
	}
	for i := 0; i < bisections && good > 0 && bad > 0 && float64(bad-good)/float64(good) > resolution && bad-good > 1; i++ {
		mid := int(math.Round(float64(good+bad) / 2))
		if ok, err = step(mid); err != nil {
			return good, bad, err
		}
		if ok {
			good = mid
		} else {
			bad = mid
		}
	}
	return good, bad, nil
}
