// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
package main

// service and service-bg (WORKLOADS.md section 8): an open-loop service. A
// generator goroutine starts N requests at precomputed Poisson arrival times,
// sleeping with time.Sleep in between (never spinning); each request is a
// new goroutine that spins on time.Now for 10 us. The measure is every
// request's sojourn, from the go statement to the request's end.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	serviceN       = 200000
	serviceWork    = 10 * time.Microsecond // S, the CPU time of one request
	serviceBgFib   = 27                    // the background job of service-bg
	serviceBgWant  = 196418                // fib(27)
	serviceTimeout = 10 * time.Minute      // a request that never ends is a miss, not a hang
)

// Percentiles of the LATENCY line, in parts per million; the max follows.
var latencyPPM = []int64{500000, 750000, 900000, 950000, 990000, 995000, 999000, 999500, 999900}

// serviceArrivals returns a_0 .. a_{n-1}, the arrival times in ns after t0:
// splitmix64 from 0x5EED0000 + load, exponential gaps of mean
// S * 100 / (load * workers) ns, summed in double precision.
func serviceArrivals(n int, load, workers int) []float64 {
	mean := float64(serviceWork.Nanoseconds()) * 100 / float64(load*workers)
	x := uint64(0x5EED0000 + load)
	a := make([]float64, n)
	sum := 0.0
	for i := range a {
		x += 0x9E3779B97F4A7C15
		z := x
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		z ^= z >> 31
		u := float64(z>>11) * (1.0 / (1 << 53))
		sum += -math.Log(1-u) * mean
		a[i] = sum
	}
	return a
}

// rank returns the ppm-th percentile of sorted v: its ceil(ppm/1e6 * n)-th
// smallest value, in integers so that 99.9 % of 200000 is exactly 199800.
func rank(v []int64, ppm int64) int64 {
	n := int64(len(v))
	k := (ppm*n + 999999) / 1000000
	if k < 1 {
		k = 1
	}
	return v[k-1]
}

func us(ns int64) string { return fmt.Sprintf("%.3f", float64(ns)/1e3) }

// serviceRun is one repetition's state. Each slot is written by one party:
// sub and late by the generator, end and done by request i, and read by the
// main goroutine only after all requests have ended (finished == N closes
// allDone, which orders every request's writes before the reads).
type serviceRun struct {
	t0       time.Time
	arrive   []float64
	sub      []int64 // s_i - t0, ns: when request i was started
	late     []int64 // s_i - (t0 + a_i), ns
	end      []int64 // c_i - t0, ns
	done     []int32 // how many times request i ended: must be 1
	finished int64   // requests ended so far (atomic)
	allDone  chan struct{}
}

// request is request i: spin on the clock for S, then mark the slot.
func (r *serviceRun) request(i int) {
	b := time.Now()
	now := b
	for now.Sub(b) < serviceWork {
		now = time.Now()
	}
	r.end[i] = int64(now.Sub(r.t0))
	atomic.AddInt32(&r.done[i], 1)
	if atomic.AddInt64(&r.finished, 1) == serviceN {
		close(r.allDone)
	}
}

// generate starts the N requests at their arrival times, from a goroutine
// of its own: it sleeps while it is early and starts a request at once
// when it is late.
func (r *serviceRun) generate() {
	for i := range r.arrive {
		due := r.t0.Add(time.Duration(r.arrive[i]))
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		s := time.Now()
		r.sub[i] = int64(s.Sub(r.t0))
		r.late[i] = int64(s.Sub(due))
		go r.request(i)
	}
}

func prepareService(bg bool) func(size string, workers int) (func() outcome, error) {
	return func(size string, workers int) (func() outcome, error) {
		load, err := parseInt(size, 1, 99)
		if err != nil {
			return nil, err
		}
		arrive := serviceArrivals(serviceN, int(load), workers)
		r := &serviceRun{
			arrive: arrive,
			sub:    make([]int64, serviceN),
			late:   make([]int64, serviceN),
			end:    make([]int64, serviceN),
			done:   make([]int32, serviceN),
		}
		return func() outcome { return r.once(bg) }, nil
	}
}

func (r *serviceRun) once(bg bool) outcome {
	for i := range r.done {
		r.done[i], r.end[i], r.sub[i], r.late[i] = 0, 0, 0, 0
	}
	r.finished = 0
	r.allDone = make(chan struct{})

	// The background job: fib 27 as in the fib workload, again and again
	// until stop is set; bgRuns counts the runs that ended, bgBad the wrong
	// answers among them.
	var stop, bgRuns, bgBad int64
	var bgWG sync.WaitGroup
	if bg {
		bgWG.Add(1)
		go func() {
			defer bgWG.Done()
			for atomic.LoadInt64(&stop) == 0 {
				if fib(serviceBgFib) != serviceBgWant {
					atomic.AddInt64(&bgBad, 1)
				}
				atomic.AddInt64(&bgRuns, 1)
			}
		}()
	}

	r.t0 = time.Now()
	go r.generate()
	missed := false
	select {
	case <-r.allDone:
	case <-time.After(serviceTimeout):
		missed = true
	}
	runs := atomic.LoadInt64(&bgRuns)
	atomic.StoreInt64(&stop, 1)
	bgWG.Wait() // untimed: the run in progress finishes

	// Verify: every slot done exactly once. The requests' end times give
	// the elapsed time, the last one's end.
	good := 0
	var last int64
	soj := make([]int64, 0, serviceN)
	for i := range r.done {
		if atomic.LoadInt32(&r.done[i]) == 1 {
			good++
			soj = append(soj, r.end[i]-r.sub[i])
			if r.end[i] > last {
				last = r.end[i]
			}
		}
	}
	ok := !missed && good == serviceN && bgBad == 0
	if !ok {
		return outcome{elapsed: time.Duration(last), answer: strconv.Itoa(good)}
	}
	sort.Slice(soj, func(a, b int) bool { return soj[a] < soj[b] })
	late := append([]int64(nil), r.late...)
	sort.Slice(late, func(a, b int) bool { return late[a] < late[b] })
	max := soj[len(soj)-1]

	extra := fmt.Sprintf("p50_us=%s p90_us=%s p99_us=%s p999_us=%s p9999_us=%s max_us=%s "+
		"late_p50_us=%s late_p99_us=%s late_max_us=%s",
		us(rank(soj, 500000)), us(rank(soj, 900000)), us(rank(soj, 990000)),
		us(rank(soj, 999000)), us(rank(soj, 999900)), us(max),
		us(rank(late, 500000)), us(rank(late, 990000)), us(late[len(late)-1]))
	if bg {
		extra += fmt.Sprintf(" bg=%d", runs)
	}
	pts := make([]string, 0, len(latencyPPM)+1)
	for _, p := range latencyPPM {
		pts = append(pts, us(rank(soj, p)))
	}
	pts = append(pts, us(max))
	return outcome{elapsed: time.Duration(last), answer: strconv.Itoa(good), ok: true,
		extra: extra, latency: "us=" + strings.Join(pts, ",")}
}
