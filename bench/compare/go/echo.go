// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
package main

// echo: the Go peer of the echo server comparison (issue #16,
// bench/compare/echo.sh), the way a Go programmer writes one: the net
// package, one goroutine per connection, GOMAXPROCS = --workers.
//
//	go echo [--port P] [--workers N] [--job]
//
// It listens on 127.0.0.1:P (0: an ephemeral port), prints "PORT <n>" on
// stdout and serves until SIGTERM or SIGINT, then exits 0. Each connection
// reads whatever has arrived and writes it back (Write returns once all of
// it is written, so a slow reader holds back its own connection only) and
// is closed on EOF. --job also runs UTS T1 in a loop, one goroutine per
// tree node as the uts workload does, in the same runtime, so requests and
// a fork/join job compete for the same Ps; at exit "JOB uts=T1 runs=R" goes
// to stderr, and a wrong tree count is an error (exit 1).
// Go (since 1.19) raises the RLIMIT_NOFILE soft limit itself, so 1,000
// connections need nothing more here.

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

func echoUsage(msg string) {
	if msg != "" {
		fmt.Fprintf(os.Stderr, "go echo: %s\n", msg)
	}
	fmt.Fprintln(os.Stderr, "usage: go echo [--port P] [--workers N] [--job]")
	os.Exit(2)
}

// echoConn echoes one connection until EOF or an error, then closes it.
func echoConn(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // io.EOF, or the peer reset the connection
		}
	}
}

// echoAccept accepts until the listener is closed.
func echoAccept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors and the like: wait a little, as net/http does.
			fmt.Fprintf(os.Stderr, "go echo: accept: %v\n", err)
			time.Sleep(5 * time.Millisecond)
			continue
		}
		go echoConn(c) // *net.TCPConn: TCP_NODELAY is on by default
	}
}

// echoJob runs UTS T1 forever, counting the runs; a wrong count sets bad.
func echoJob(runs, bad *atomic.Int64) {
	t, _ := lookupTree("T1")
	for {
		c := utsNode(t, rootDigest(t.seed), 0)
		if c.nodes != t.nodes || c.leaves != t.leaves || c.depth != t.depth {
			bad.Add(1)
		}
		runs.Add(1)
	}
}

func echoMain(args []string) {
	port, workers, job := 0, runtime.NumCPU(), false
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "--port", "--workers":
			if i+1 >= len(args) {
				echoUsage(a + " needs a value")
			}
			v, err := strconv.Atoi(args[i+1])
			if err != nil || v < 0 || (a == "--port" && v > 65535) || (a == "--workers" && v < 1) {
				echoUsage(a + ": bad value " + args[i+1])
			}
			if a == "--port" {
				port = v
			} else {
				workers = v
			}
			i++
		case "--job":
			job = true
		case "-h", "--help":
			echoUsage("")
		default:
			echoUsage("unknown option " + a)
		}
	}
	runtime.GOMAXPROCS(workers)

	ln, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		fmt.Fprintf(os.Stderr, "go echo: %v\n", err)
		os.Exit(1)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	var runs, bad atomic.Int64
	if job {
		go echoJob(&runs, &bad)
	}
	fmt.Printf("PORT %d\n", ln.Addr().(*net.TCPAddr).Port) // os.Stdout is not buffered
	go echoAccept(ln)

	<-stop
	ln.Close()
	if job {
		fmt.Fprintf(os.Stderr, "JOB uts=T1 runs=%d\n", runs.Load())
		if bad.Load() != 0 {
			fmt.Fprintf(os.Stderr, "go echo: %d UTS runs counted the wrong tree\n", bad.Load())
			os.Exit(1)
		}
	}
	os.Exit(0)
}
