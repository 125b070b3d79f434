// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
package main

import (
	"errors"
	"sort"
	"strconv"
	"time"
)

// ---- sort: the standard library's sort, on one goroutine -------------------

// Go's standard library has no parallel sort, so this peer runs sort only at
// --workers 1, where sort.Slice (pattern-defeating quicksort since Go 1.19,
// in place) is what a Go programmer would call. slices.Sort needs Go 1.21;
// the module targets Debian 12's Go 1.19.

// fmix64 is MurmurHash3's 64-bit finaliser, for the fingerprint.
func fmix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	return x ^ (x >> 33)
}

// fingerprint is the wrapping sum of fmix64 of every element read as uint32:
// the same for every order of the same multiset.
func fingerprint(a []int32) uint64 {
	var f uint64
	for _, v := range a {
		f += fmix64(uint64(uint32(v)))
	}
	return f
}

// sortInput: element i is the low 32 bits, as int32, of the state after
// i + 1 xorshift64 steps (13, 7, 17) from 0x9E3779B97F4A7C15 (WORKLOADS.md).
func sortInput(n int64) []int32 {
	a := make([]int32, n)
	s := uint64(0x9E3779B97F4A7C15)
	for i := range a {
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		a[i] = int32(uint32(s))
	}
	return a
}

func prepareSort(size string, workers int) (func() outcome, error) {
	n, err := parseInt(size, 0, 1<<28)
	if err != nil {
		return nil, err
	}
	if workers != 1 {
		return nil, errors.New("the Go standard library has no parallel sort: sort runs at --workers 1 only")
	}
	input := sortInput(n)
	want := fingerprint(input)
	data := make([]int32, n)
	return func() outcome {
		copy(data, input) // untimed; touches every page
		start := time.Now()
		sort.Slice(data, func(i, j int) bool { return data[i] < data[j] })
		elapsed := time.Since(start)
		sorted := sort.SliceIsSorted(data, func(i, j int) bool { return data[i] < data[j] })
		got := fingerprint(data)
		return outcome{elapsed: elapsed, answer: strconv.FormatUint(got, 10), ok: sorted && got == want}
	}, nil
}
