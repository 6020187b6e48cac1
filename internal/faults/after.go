package faults

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// after runs do in a goroutine of its own once the delay has passed and
// returns at once: a fault at a known time into the run. Cleanup waits for it
// and fails the test with do's error, or when the test ended before the delay
// (what names the action in that message).
func after(t testing.TB, delay time.Duration, what string, do func() error) {
	t.Helper()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var err error
	wg.Go(func() {
		select {
		case <-time.After(delay):
		case <-stop:
			err = fmt.Errorf("the test ended before the %s (%s in)", what, delay)
			return
		}
		err = do()
	})
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	})
}
