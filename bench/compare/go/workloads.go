// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
package main

import (
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ---- fib: fork-join with no cutoff -------------------------------------

// fib spawns fib(n-1) as a goroutine and runs fib(n-2) in the calling
// goroutine before waiting, the Go shape of join(a, b).
func fib(n int64) int64 {
	if n < 2 {
		return n
	}
	var a int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		a = fib(n - 1)
		wg.Done()
	}()
	b := fib(n - 2)
	wg.Wait()
	return a + b
}

func fibSerial(n int64) int64 {
	a, b := int64(0), int64(1)
	for i := int64(0); i < n; i++ {
		a, b = b, a+b
	}
	return a
}

func prepareFib(size string, workers int) (func() outcome, error) {
	n, err := parseInt(size, 0, 60)
	if err != nil {
		return nil, err
	}
	want := fibSerial(n)
	return func() outcome {
		start := time.Now()
		got := fib(n)
		elapsed := time.Since(start)
		return outcome{elapsed: elapsed, answer: strconv.FormatInt(got, 10), ok: got == want}
	}, nil
}

// ---- nqueens: one goroutine per safe column -----------------------------

// nqueensKnown holds the number of solutions for n = 0..16.
var nqueensKnown = []int64{1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680,
	14200, 73712, 365596, 2279184, 14772512}

// queens counts the completions of a board whose occupied columns and
// attacked diagonals (for the next row) are the three masks.
func queens(all, cols, left, right uint32) int64 {
	if cols == all {
		return 1
	}
	free := all &^ (cols | left | right)
	var counts [32]int64
	var wg sync.WaitGroup
	k := 0
	for free != 0 {
		bit := free & -free
		free ^= bit
		wg.Add(1)
		go func(slot *int64, bit uint32) {
			*slot = queens(all, cols|bit, ((left|bit)<<1)&all, (right|bit)>>1)
			wg.Done()
		}(&counts[k], bit)
		k++
	}
	wg.Wait()
	var sum int64
	for i := 0; i < k; i++ {
		sum += counts[i]
	}
	return sum
}

func queensSerial(all, cols, left, right uint32) int64 {
	if cols == all {
		return 1
	}
	var sum int64
	for free := all &^ (cols | left | right); free != 0; {
		bit := free & -free
		free ^= bit
		sum += queensSerial(all, cols|bit, ((left|bit)<<1)&all, (right|bit)>>1)
	}
	return sum
}

func prepareNqueens(size string, workers int) (func() outcome, error) {
	n, err := parseInt(size, 1, 20)
	if err != nil {
		return nil, err
	}
	all := uint32(1)<<uint(n) - 1
	var want int64
	if int(n) < len(nqueensKnown) {
		want = nqueensKnown[n]
	} else {
		want = queensSerial(all, 0, 0, 0)
	}
	return func() outcome {
		start := time.Now()
		got := queens(all, 0, 0, 0)
		elapsed := time.Since(start)
		return outcome{elapsed: elapsed, answer: strconv.FormatInt(got, 10), ok: got == want}
	}, nil
}

// ---- uts: one goroutine per tree node -----------------------------------

type utsCount struct {
	nodes, leaves, depth int64
}

func (c *utsCount) add(o utsCount) {
	c.nodes += o.nodes
	c.leaves += o.leaves
	if o.depth > c.depth {
		c.depth = o.depth
	}
}

// utsNode visits the node with the given digest at the given depth and
// everything below it. The parent computes each child's digest and hands it
// to the child's goroutine by value.
func utsNode(t *utsTree, d digest, depth int) utsCount {
	n := t.numChildren(&d, depth)
	if n == 0 {
		return utsCount{1, 1, int64(depth)}
	}
	kids := make([]utsCount, n)
	var wg sync.WaitGroup
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func(i int, cd digest) {
			kids[i] = utsNode(t, cd, depth+1)
			wg.Done()
		}(i, childDigest(&d, uint32(i)))
	}
	wg.Wait()
	c := utsCount{1, 0, int64(depth)}
	for i := range kids {
		c.add(kids[i])
	}
	return c
}

func prepareUts(size string, workers int) (func() outcome, error) {
	t, err := lookupTree(size)
	if err != nil {
		return nil, err
	}
	return func() outcome {
		start := time.Now()
		c := utsNode(t, rootDigest(t.seed), 0)
		elapsed := time.Since(start)
		ok := c.nodes == t.nodes && c.leaves == t.leaves && c.depth == t.depth
		return outcome{elapsed: elapsed, answer: strconv.FormatInt(c.nodes, 10), ok: ok}
	}, nil
}

// ---- fanout: one submitter, N independent tiny goroutines ---------------

func prepareFanout(size string, workers int) (func() outcome, error) {
	n, err := parseInt(size, 1, 1<<31)
	if err != nil {
		return nil, err
	}
	slots := make([]int64, n)
	return func() outcome {
		for i := range slots {
			slots[i] = 0
		}
		start := time.Now()
		var wg sync.WaitGroup
		wg.Add(int(n))
		for i := int64(0); i < n; i++ {
			go func(i int64) {
				slots[i] = i + 1
				wg.Done()
			}(i)
		}
		wg.Wait()
		elapsed := time.Since(start)
		var good int64
		for i := range slots {
			if slots[i] == int64(i)+1 {
				good++
			}
		}
		return outcome{elapsed: elapsed, answer: strconv.FormatInt(good, 10), ok: good == n}
	}, nil
}

// ---- pingpong: two goroutines hand a token back and forth ---------------

// pingpongEnd is what the goroutine that made the last hop reports.
type pingpongEnd struct {
	token int64
	at    time.Time // the end of the last hop
}

// pingpongSide is one of the two goroutines: side 0 (ping) or 1 (pong).
// Each token it receives on in is one hop: the token counts the hops made
// so far, so ping receives the even ones and pong the odd ones. It counts
// the hop and hands the token over on out; the hop that makes the count n
// reads the clock and reports instead. Closing out on the way out stops the
// other side, which is then waiting on its in.
func pingpongSide(side, n int64, in <-chan int64, out chan<- int64, done chan<- pingpongEnd,
	outOfTurn *int64, wg *sync.WaitGroup) {
	defer wg.Done()
	defer close(out)
	for v := range in {
		if v&1 != side {
			atomic.AddInt64(outOfTurn, 1)
		}
		v++
		if v >= n {
			done <- pingpongEnd{v, time.Now()}
			return
		}
		out <- v
	}
}

func preparePingpong(size string, workers int) (func() outcome, error) {
	n, err := parseInt(size, 1, 2000000000)
	if err != nil {
		return nil, err
	}
	return func() outcome {
		var outOfTurn int64
		var wg sync.WaitGroup
		toPing, toPong := make(chan int64), make(chan int64) // unbuffered
		done := make(chan pingpongEnd, 1)
		wg.Add(2)
		start := time.Now()
		go pingpongSide(0, n, toPing, toPong, done, &outOfTurn, &wg)
		go pingpongSide(1, n, toPong, toPing, done, &outOfTurn, &wg)
		toPing <- 0 // hop 1 is ping's
		end := <-done
		elapsed := end.at.Sub(start)
		wg.Wait() // untimed: the other side sees its channel closed and exits
		ok := end.token == n && atomic.LoadInt64(&outOfTurn) == 0
		return outcome{elapsed: elapsed, answer: strconv.FormatInt(end.token, 10), ok: ok}
	}, nil
}

// ---- tri: parallel loop with triangular cost -----------------------------

func triIter(i uint64) uint64 {
	x := (i + 1) * 0x9E3779B97F4A7C15
	for s := uint64(0); s < i; s++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

func triSerial(n uint64) uint64 {
	var sum uint64
	for i := uint64(0); i < n; i++ {
		sum += triIter(i)
	}
	return sum
}

// triParallel is the usual Go parallel loop: one goroutine per processor,
// each claiming chunks of iterations from a shared counter until none are
// left. Chunks are small (about 64 per worker) so the costly tail of the
// triangle is shared out.
func triParallel(n uint64, workers int) uint64 {
	chunk := n / uint64(64*workers)
	if chunk < 1 {
		chunk = 1
	}
	var next uint64
	var mu sync.Mutex
	var total uint64
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func() {
			var sum uint64
			for {
				lo := atomic.AddUint64(&next, chunk) - chunk
				if lo >= n {
					break
				}
				hi := lo + chunk
				if hi > n {
					hi = n
				}
				for i := lo; i < hi; i++ {
					sum += triIter(i)
				}
			}
			mu.Lock()
			total += sum
			mu.Unlock()
			wg.Done()
		}()
	}
	wg.Wait()
	return total
}

func prepareTri(size string, workers int) (func() outcome, error) {
	n, err := parseInt(size, 0, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	want, known := triKnown[uint64(n)]
	if !known {
		want = triSerial(uint64(n)) // untimed reference
	}
	return func() outcome {
		start := time.Now()
		got := triParallel(uint64(n), workers)
		elapsed := time.Since(start)
		return outcome{elapsed: elapsed, answer: strconv.FormatUint(got, 10), ok: got == want}
	}, nil
}

// triKnown holds answers that the Go, Java and Rust peers and the C peers
// (which compute theirs by matrix powers over GF(2)) agreed on; other sizes
// are checked against a serial run made before timing starts.
var triKnown = map[uint64]uint64{
	1000:  1470359940646472591,
	2000:  16104136941049589645,
	3000:  11742803937030613110,
	10000: 13002097167768187927,
	20000: 11630069088216439415,
	30000: 11923028442741524185,
	34000: 11492779753814018237,
}
