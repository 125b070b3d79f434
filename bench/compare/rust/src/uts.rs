// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
//! Unbalanced Tree Search: one rayon task per tree node.

use crate::{timed, Outcome, Run};
use sha1::{Digest, Sha1};

type NodeDigest = [u8; 20];

/// One named tree and the counts it must produce.
struct Tree {
    binomial: bool,
    b0: f64,
    q: f64,
    m: usize,
    gen_mx: u32,
    seed: u32,
    nodes: u64,
    leaves: u64,
    depth: u32,
}

const T1: Tree = Tree {
    binomial: false,
    b0: 4.0,
    q: 0.0,
    m: 0,
    gen_mx: 10,
    seed: 19,
    nodes: 4_130_071,
    leaves: 3_305_118,
    depth: 10,
};
const T3: Tree = Tree {
    binomial: true,
    b0: 2000.0,
    q: 0.124875,
    m: 8,
    gen_mx: 0,
    seed: 42,
    nodes: 4_112_897,
    leaves: 3_599_034,
    depth: 1572,
};

/// Node, leaf and maximum-depth counts of a subtree.
#[derive(Clone, Copy)]
struct Count {
    nodes: u64,
    leaves: u64,
    depth: u32,
}

fn sha1_of(bytes: &[u8]) -> NodeDigest {
    let mut h = Sha1::new();
    h.update(bytes);
    h.finalize().into()
}

/// SHA-1(16 zero bytes || seed big-endian).
fn root_digest(seed: u32) -> NodeDigest {
    let mut buf = [0u8; 20];
    buf[16..].copy_from_slice(&seed.to_be_bytes());
    sha1_of(&buf)
}

/// SHA-1(parent || i big-endian).
fn child_digest(parent: &NodeDigest, i: u32) -> NodeDigest {
    let mut buf = [0u8; 24];
    buf[..20].copy_from_slice(parent);
    buf[20..].copy_from_slice(&i.to_be_bytes());
    sha1_of(&buf)
}

fn prob(d: &NodeDigest) -> f64 {
    let r = u32::from_be_bytes([d[16], d[17], d[18], d[19]]) & 0x7FFF_FFFF;
    r as f64 / 2_147_483_648.0
}

fn num_children(t: &Tree, d: &NodeDigest, depth: u32) -> usize {
    if t.binomial {
        if depth == 0 {
            return t.b0.floor() as usize;
        }
        return if prob(d) < t.q { t.m } else { 0 };
    }
    if depth >= t.gen_mx {
        return 0;
    }
    let p = 1.0 / (1.0 + t.b0);
    let n = ((1.0 - prob(d)).ln() / (1.0 - p).ln()).floor() as usize;
    n.min(100)
}

/// Visits the node with digest d at the given depth and its subtree. The
/// parent computes its children's digests, then forks one task per child.
fn visit(t: &Tree, d: &NodeDigest, depth: u32) -> Count {
    let n = num_children(t, d, depth);
    if n == 0 {
        return Count {
            nodes: 1,
            leaves: 1,
            depth,
        };
    }
    let kids: Vec<NodeDigest> = (0..n as u32).map(|i| child_digest(d, i)).collect();
    let mut c = visit_children(t, &kids, depth + 1);
    c.nodes += 1;
    c.depth = c.depth.max(depth);
    c
}

/// Visits the children whose digests are `kids`, one task each: rayon's fork
/// is the binary `join`, so a k-way fork is a balanced tree of k - 1 joins.
fn visit_children(t: &Tree, kids: &[NodeDigest], depth: u32) -> Count {
    if let [only] = kids {
        return visit(t, only, depth);
    }
    let (l, r) = kids.split_at(kids.len() / 2);
    let (a, b) = rayon::join(
        || visit_children(t, l, depth),
        || visit_children(t, r, depth),
    );
    Count {
        nodes: a.nodes + b.nodes,
        leaves: a.leaves + b.leaves,
        depth: a.depth.max(b.depth),
    }
}

pub fn prepare(size: &str) -> Result<Run, String> {
    let t: &'static Tree = match size {
        "T1" => &T1,
        "T3" => &T3,
        _ => return Err(format!("uts size \"{}\": known trees are T1 and T3", size)),
    };
    Ok(Box::new(move |pool: &rayon::ThreadPool| {
        let (c, elapsed) = timed(|| pool.install(|| visit(t, &root_digest(t.seed), 0)));
        let ok = c.nodes == t.nodes && c.leaves == t.leaves && c.depth == t.depth;
        Outcome {
            elapsed,
            answer: c.nodes.to_string(),
            ok,
        }
    }))
}
