// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
package main

import (
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"math"
)

// digest is a UTS node's state: a SHA-1 digest.
type digest [sha1.Size]byte

// utsTree describes one named tree and the counts it must produce.
type utsTree struct {
	binomial bool
	b0       float64 // root branching factor (binomial), mean branching (geometric)
	q        float64 // binomial: probability of having m children
	m        int     // binomial: number of children of a non-leaf
	genMx    int     // geometric: depth below which nodes may have children
	seed     uint32

	nodes, leaves, depth int64 // expected counts
}

var utsTrees = map[string]*utsTree{
	"T1": {binomial: false, b0: 4, genMx: 10, seed: 19,
		nodes: 4130071, leaves: 3305118, depth: 10},
	"T3": {binomial: true, b0: 2000, q: 0.124875, m: 8, seed: 42,
		nodes: 4112897, leaves: 3599034, depth: 1572},
}

func lookupTree(name string) (*utsTree, error) {
	t, ok := utsTrees[name]
	if !ok {
		return nil, fmt.Errorf("uts size %q: known trees are T1 and T3", name)
	}
	return t, nil
}

// rootDigest is SHA-1(16 zero bytes || seed big-endian).
func rootDigest(seed uint32) digest {
	var buf [20]byte
	binary.BigEndian.PutUint32(buf[16:], seed)
	return sha1.Sum(buf[:])
}

// childDigest is SHA-1(parent || i big-endian).
func childDigest(parent *digest, i uint32) digest {
	var buf [24]byte
	copy(buf[:20], parent[:])
	binary.BigEndian.PutUint32(buf[20:], i)
	return sha1.Sum(buf[:])
}

// prob maps a digest to [0, 1): its bytes 16..19, big-endian, low 31 bits.
func prob(d *digest) float64 {
	r := binary.BigEndian.Uint32(d[16:]) & 0x7FFFFFFF
	return float64(r) / 2147483648.0
}

func (t *utsTree) numChildren(d *digest, depth int) int {
	if t.binomial {
		if depth == 0 {
			return int(math.Floor(t.b0))
		}
		if prob(d) < t.q {
			return t.m
		}
		return 0
	}
	if depth >= t.genMx {
		return 0
	}
	p := 1.0 / (1.0 + t.b0)
	n := int(math.Floor(math.Log(1.0-prob(d)) / math.Log(1.0-p)))
	if n > 100 {
		n = 100
	}
	return n
}
