// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
// Command go is the Go peer of wsbench: the comparison workloads written the
// way a Go programmer would write them, with goroutines, sync.WaitGroup and
// (pingpong) channels on a runtime limited to GOMAXPROCS = --workers.
//
// Usage: go [--workers P] [--repeat R] WORKLOAD [SIZE]
//
//	go --list
//	go echo [--port P] [--workers N] [--job]   (the echo server: echo.go)
//
// Every repetition prints one line
//
//	RESULT impl=go workload=W size=S workers=P ms=M answer=A ok=1|0
//
// (service and service-bg add percentile fields after ok= and print a
// LATENCY line after each RESULT line: WORKLOADS.md section 8; sleepers,
// chain and switch add measures after ok=: sections 9-11)
// and the process exits 1 if any answer was wrong, 2 on a usage error.
// The runtime is set up once; the timed region is the workload alone.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"
)

// outcome is what one run of a workload produced.
type outcome struct {
	elapsed time.Duration // the timed part alone
	answer  string        // printed as answer=
	ok      bool          // answer matched the expected value
	extra   string        // fields printed after ok= (service: percentiles)
	latency string        // the LATENCY line's us= field, if any (service)
}

// workload prepares (untimed) a run of one workload at one size and returns
// a function that runs it once. That function times only the work itself:
// resetting inputs and checking the answer happen outside its clock.
// prepare errors are usage errors.
type workload struct {
	name    string
	defSize string
	about   string
	prepare func(size string, workers int) (func() outcome, error)
}

var workloads = []workload{
	{"fib", "32", "fib(N), one goroutine per call (the other half runs inline), no cutoff", prepareFib},
	{"nqueens", "12", "all N-queens solutions, one goroutine per safe column", prepareNqueens},
	{"uts", "T1", "UTS tree T1 or T3, one goroutine per child node", prepareUts},
	{"fanout", "1000000", "main goroutine starts N tiny goroutines, WaitGroup", prepareFanout},
	{"tri", "34000", "parallel loop: P goroutines take chunks of N/(64P) from a counter", prepareTri},
	{"sort", "10000000", "sort.Slice of N int32 on one goroutine (--workers 1 only)", prepareSort},
	{"pingpong", "1000000", "two goroutines hand a token over unbuffered channels, N hops", preparePingpong},
	{"service", "80", "open loop: a generator goroutine starts 200000 10-us requests (go statements) at load L%", prepareService(false)},
	{"service-bg", "80", "service with fib 27 (goroutines, WaitGroup) looping in the background", prepareService(true)},
	{"sleepers", "10000", "N goroutines each time.Sleep 50 ms, WaitGroup; peak threads, RSS per goroutine", prepareSleepers},
	{"chain", "10000", "daisy chain: goroutine i receives from channel i+1, sends on channel i", prepareChain},
	{"switch", "1000000", "two goroutines over two unbuffered channels, N round trips", prepareSwitch},
	{"chanpp", "1000000", "switch's program: two goroutines over two unbuffered channels, N round trips", prepareSwitch},
	{"chanbuf", "1000000", "a producer goroutine sends 1..N into a channel of capacity 128, main sums", prepareChanbuf},
	{"sieve", "10000", "the concurrent prime sieve: a chain of N filter goroutines, the Nth prime", prepareSieve},
}

func findWorkload(name string) (workload, bool) {
	for _, w := range workloads {
		if w.name == name {
			return w, true
		}
	}
	return workload{}, false
}

func usage(msg string) {
	if msg != "" {
		fmt.Fprintf(os.Stderr, "go: %s\n", msg)
	}
	fmt.Fprintln(os.Stderr, "usage: go [--workers P] [--repeat R] fib|nqueens|uts|fanout|tri|sort|pingpong|service|service-bg|sleepers|chain|switch|chanpp|chanbuf|sieve [SIZE]")
	fmt.Fprintln(os.Stderr, "       go --list")
	fmt.Fprintln(os.Stderr, "       go echo [--port P] [--workers N] [--job]")
	os.Exit(2)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "echo" {
		echoMain(os.Args[2:]) // the echo server (echo.go); it never returns
	}
	workers := runtime.NumCPU()
	repeat := 1
	args := os.Args[1:]
	posn := []string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "--workers", "--repeat":
			if i+1 >= len(args) {
				usage(a + " needs a value")
			}
			v, err := strconv.Atoi(args[i+1])
			if err != nil || v < 1 {
				usage(a + " needs a positive integer")
			}
			if a == "--workers" {
				workers = v
			} else {
				repeat = v
			}
			i++
		case "-h", "--help":
			usage("")
		case "--list":
			for _, w := range workloads {
				fmt.Printf("%-8s %-8s %s\n", w.name, w.defSize, w.about)
			}
			os.Exit(0)
		default:
			posn = append(posn, a)
		}
	}
	if len(posn) < 1 || len(posn) > 2 {
		usage("expected WORKLOAD [SIZE]")
	}
	name := posn[0]
	w, found := findWorkload(name)
	if !found {
		usage("unknown workload " + name)
	}
	size := w.defSize
	if len(posn) == 2 {
		size = posn[1]
	}

	runtime.GOMAXPROCS(workers)
	run, err := w.prepare(size, workers)
	if err != nil {
		usage(err.Error())
	}

	allOK := true
	for r := 0; r < repeat; r++ {
		out := run()
		ok := 0
		if out.ok {
			ok = 1
		} else {
			allOK = false
		}
		extra := ""
		if out.extra != "" {
			extra = " " + out.extra
		}
		fmt.Printf("RESULT impl=go workload=%s size=%s workers=%d ms=%.3f answer=%s ok=%d%s\n",
			name, size, workers, float64(out.elapsed.Nanoseconds())/1e6, out.answer, ok, extra)
		if out.latency != "" {
			fmt.Printf("LATENCY impl=go workload=%s size=%s workers=%d %s\n", name, size, workers, out.latency)
		}
	}
	if !allOK {
		fmt.Fprintln(os.Stderr, "go: WRONG ANSWER")
		os.Exit(1)
	}
}

func parseInt(size string, lo, hi int64) (int64, error) {
	v, err := strconv.ParseInt(size, 10, 64)
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("size %q: need an integer in [%d, %d]", size, lo, hi)
	}
	return v, nil
}
