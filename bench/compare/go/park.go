// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
package main

// sleepers, chain and switch (WORKLOADS.md sections 9-11): goroutines that
// park. sleepers: N goroutines each time.Sleep 50 ms, joined by a
// WaitGroup, while a sampler goroutine reads /proc/self/status and
// runtime.NumGoroutine every 1 ms for the peak thread count, VmRSS and
// goroutine count. chain: the classic daisy chain of
// unbuffered channels. switch: pingpong's two goroutines, 2N hops.

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

const sleepFor = 50 * time.Millisecond

// procStatus returns Threads: and VmRSS: (kB) of /proc/self/status, -1
// when they cannot be read.
func procStatus(f *os.File, buf []byte) (threads, rssKB int64) {
	threads, rssKB = -1, -1
	n, _ := f.ReadAt(buf, 0)
	field := func(name string) int64 {
		i := bytes.Index(buf[:n], []byte("\n"+name+":"))
		if i < 0 {
			return -1
		}
		rest := bytes.TrimLeft(buf[i+len(name)+2:n], " \t")
		j := bytes.IndexAny(rest, " \n")
		if j < 0 {
			return -1
		}
		v, err := strconv.ParseInt(string(rest[:j]), 10, 64)
		if err != nil {
			return -1
		}
		return v
	}
	return field("Threads"), field("VmRSS")
}

// sampler polls /proc/self/status and the goroutine count every
// millisecond until stop is closed, then sends the peaks: threads, VmRSS
// kB, and goroutines other than main and itself.
func sampler(f *os.File, stop <-chan struct{}, peaks chan<- [3]int64) {
	buf := make([]byte, 4096)
	var peak [3]int64
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		t, r := procStatus(f, buf)
		if t > peak[0] {
			peak[0] = t
		}
		if r > peak[1] {
			peak[1] = r
		}
		if g := int64(runtime.NumGoroutine() - 2); g > peak[2] {
			peak[2] = g
		}
		select {
		case <-stop:
			peaks <- peak
			return
		case <-tick.C:
		}
	}
}

func prepareSleepers(size string, workers int) (func() outcome, error) {
	n, err := parseInt(size, 1, 1000000)
	if err != nil {
		return nil, err
	}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return nil, err
	}
	// The baseline: VmRSS before the first run, so memory the runtime kept
	// from an earlier run still counts as the sleeping goroutines'.
	_, base := procStatus(f, make([]byte, 4096))
	return func() outcome {
		stop, peaks := make(chan struct{}), make(chan [3]int64)
		go sampler(f, stop, peaks)
		var woke int64
		var wg sync.WaitGroup
		start := time.Now()
		for i := int64(0); i < n; i++ {
			wg.Add(1)
			go func() {
				time.Sleep(sleepFor)
				atomic.AddInt64(&woke, 1)
				wg.Done()
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		close(stop)
		peak := <-peaks
		perTask, perParked := -1.0, -1.0
		if peak[1] >= 0 && base >= 0 {
			perTask = float64(peak[1]-base) * 1024 / float64(n)
			if peak[2] > 0 {
				perParked = float64(peak[1]-base) * 1024 / float64(peak[2])
			}
		}
		got := atomic.LoadInt64(&woke)
		return outcome{elapsed: elapsed, answer: strconv.FormatInt(got, 10),
			ok: got == n && elapsed >= sleepFor,
			extra: fmt.Sprintf("peak_threads=%d rss_per_task_bytes=%.0f peak_parked=%d rss_per_parked_bytes=%.0f",
				peak[0], perTask, peak[2], perParked)}
	}, nil
}

// chainLink is goroutine i of the daisy chain: it receives its successor's
// value from right and sends one more on left.
func chainLink(left chan<- int64, right <-chan int64) {
	left <- 1 + <-right
}

func prepareChain(size string, workers int) (func() outcome, error) {
	n, err := parseInt(size, 1, 100000000)
	if err != nil {
		return nil, err
	}
	return func() outcome {
		start := time.Now()
		leftmost := make(chan int64)
		left := leftmost
		for i := int64(0); i < n-1; i++ {
			right := make(chan int64)
			go chainLink(left, right)
			left = right
		}
		go func(c chan<- int64) { c <- 1 }(left) // the last one
		got := <-leftmost
		elapsed := time.Since(start)
		return outcome{elapsed: elapsed, answer: strconv.FormatInt(got, 10), ok: got == n,
			extra: fmt.Sprintf("ns_per_link=%.1f", float64(elapsed.Nanoseconds())/float64(n))}
	}, nil
}

// prepareSwitch runs pingpong's two goroutines over two unbuffered
// channels for 2N hops: N round trips.
func prepareSwitch(size string, workers int) (func() outcome, error) {
	n, err := parseInt(size, 1, 1000000000)
	if err != nil {
		return nil, err
	}
	return func() outcome {
		var outOfTurn int64
		var wg sync.WaitGroup
		toPing, toPong := make(chan int64), make(chan int64)
		done := make(chan pingpongEnd, 1)
		wg.Add(2)
		start := time.Now()
		go pingpongSide(0, 2*n, toPing, toPong, done, &outOfTurn, &wg)
		go pingpongSide(1, 2*n, toPong, toPing, done, &outOfTurn, &wg)
		toPing <- 0
		end := <-done
		elapsed := end.at.Sub(start)
		wg.Wait()
		ok := end.token == 2*n && atomic.LoadInt64(&outOfTurn) == 0
		return outcome{elapsed: elapsed, answer: strconv.FormatInt(end.token/2, 10), ok: ok,
			extra: fmt.Sprintf("ns_per_trip=%.1f", float64(elapsed.Nanoseconds())/float64(n))}
	}, nil
}
