// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
package main

// chanpp, chanbuf and sieve (WORKLOADS.md sections 12-14), the Go twins of
// wsbench's channel workloads. chanpp is switch's program (two goroutines,
// two unbuffered channels, N round trips). chanbuf: a producer goroutine
// sends 1..N into a channel of capacity 128 and closes it, the main
// goroutine sums. sieve: the concurrent prime sieve to the Nth prime, with
// the generator stopping at a bound on the Nth prime and every filter
// closing its output when its input is closed, so that every goroutine
// ends (wsbench's sieve does the same).

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

func prepareChanbuf(size string, workers int) (func() outcome, error) {
	n, err := parseInt(size, 1, 1000000000)
	if err != nil {
		return nil, err
	}
	return func() outcome {
		start := time.Now()
		ch := make(chan int64, 128)
		go func() {
			for i := int64(1); i <= n; i++ {
				ch <- i
			}
			close(ch)
		}()
		var sum int64
		for v := range ch {
			sum += v
		}
		elapsed := time.Since(start)
		return outcome{elapsed: elapsed, answer: strconv.FormatInt(sum, 10), ok: sum == n*(n+1)/2,
			extra: fmt.Sprintf("ns_per_elem=%.1f", float64(elapsed.Nanoseconds())/float64(n))}
	}, nil
}

// sieveBound is an upper bound on the nth prime (Rosser, n >= 6).
func sieveBound(n int64) int64 {
	if n < 6 {
		return 13
	}
	x := float64(n)
	return int64(x*(math.Log(x)+math.Log(math.Log(x)))) + 1
}

func sieveGenerate(out chan<- int64, bound int64) {
	for i := int64(2); i <= bound; i++ {
		out <- i
	}
	close(out)
}

func sieveFilter(in <-chan int64, out chan<- int64, prime int64) {
	for v := range in {
		if v%prime != 0 {
			out <- v
		}
	}
	close(out)
}

func prepareSieve(size string, workers int) (func() outcome, error) {
	n, err := parseInt(size, 1, 200000)
	if err != nil {
		return nil, err
	}
	bound := sieveBound(n)
	return func() outcome {
		start := time.Now()
		ch := make(chan int64)
		go sieveGenerate(ch, bound)
		var prime int64
		for i := int64(0); i < n; i++ {
			prime = <-ch
			next := make(chan int64)
			go sieveFilter(ch, next, prime)
			ch = next
		}
		for range ch { // drain: every goroutine ends
		}
		elapsed := time.Since(start)
		return outcome{elapsed: elapsed, answer: strconv.FormatInt(prime, 10), ok: true,
			extra: fmt.Sprintf("bound=%d", bound)}
	}, nil
}
