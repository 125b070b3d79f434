/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * pd.pml -- a task reading a byte stream through a poll descriptor (the
 * pd of src/core/netpoll.c, "Parked waits", issue #32): edge-triggered
 * registration, the ready flag, the "drained" hint, and the registration
 * check of a wait that parks.
 *
 * Source: ws_read (src/api/io.c) and ws__io_rstate, ws__io_short,
 * ws__io_wait, pd_check, fire_pd (src/core/netpoll.c), checked against
 * them step by step on 2026-12-03. Update the model by hand when they
 * change.
 *
 * Processes:
 *   Writer  puts NDATA bytes into the stream one at a time; each arrival
 *           is an edge if the kernel has a registration for the file
 *           (`kreg`): epoll queues it (`edge`, one ready-list entry).
 *   Holder  the poller's holder: takes a queued edge (the epoll_wait),
 *           then, under the pd's lock, counts it (rseq), clears rdrained,
 *           and readies the waiting reader or sets rready.
 *   Reader  ws_read in a loop until it has all NDATA bytes, asking for
 *           ASK bytes each time (so reads come back short): the drained
 *           hint first (wait without reading), then read(2) (EAGAIN: wait;
 *           short: ws__io_short with the rseq loaded before the read). A
 *           wait, under the lock: the ready flag consumed, or the
 *           registration checked (pd_check: epoll's ADD, which registers
 *           a file that has none and then reports what is ready now) and
 *           the reader hooked; parked until the holder readies it.
 * With STALE, the pd starts registered while the kernel has no
 * registration (the descriptor before was closed with close(2) and its
 * number came back): only pd_check can make edges flow.
 *
 * Checked: no invalid end state (a reader parked with nobody to ready it
 * is one), and at the end the reader has every byte. The unlocked loads
 * of ws__io_rstate are separate steps (any interleaving).
 *
 * Variants (spin -D...), which SPIN must reject:
 *   NOSEQ    ws__io_short marks the pd drained without comparing rseq and
 *            without looking at rready: an edge handled between the read
 *            and the mark is forgotten, and the reader waits for good;
 *   NOCHECK  (with STALE) a wait parks without pd_check: no edge ever
 *            comes for the new file.
 */

#ifndef NDATA
#define NDATA 3
#endif
#define ASK 2

byte data;          /* bytes in the stream (kernel) */
bool kreg = true;   /* the kernel has a registration for the file */
bool edge;          /* an edge queued in epoll's ready list */
byte written;

/* The pd, under `lock` (a byte one process holds). */
bool lock;
bool registered = true;
bool rready;
bool rdrained;
byte rseq;
bool hooked;        /* the reader waits (pd->rd) */
bool woken;         /* the holder readied it */

byte got;           /* bytes the reader has */

inline acquire() { atomic { !lock -> lock = true } }
inline release() { lock = false }

proctype Writer() {
  do
  :: written < NDATA ->
     atomic {
       data++;
       written++;
       if :: kreg -> edge = true :: else -> skip fi
     }
  :: else -> break
  od
}

proctype Holder() {
end_h:
  do
  :: atomic { edge -> edge = false }
     acquire();
     if
     :: registered ->
        rseq = (rseq + 1) % 4;
        rdrained = false;
        if
        :: hooked -> hooked = false; woken = true
        :: else -> rready = true
        fi
     :: else -> skip
     fi;
     release()
  od
}

/* ws__io_wait for reading: returns once an edge came since the last one
   consumed, or the holder readied the parked reader. */
inline wait() {
  acquire();
  if
  :: rready -> rready = false; release()
  :: else ->
#ifndef NOCHECK
     /* pd_check: ADD registers a file with none, and reports what is
        ready now (ep_insert polls the file). */
     atomic {
       if
       :: !kreg -> kreg = true; rdrained = false; if :: data > 0 -> edge = true :: else -> skip fi
       :: else -> skip
       fi
     }
#endif
     hooked = true; woken = false;
     release();
     woken;     /* parked until readied */
     acquire(); /* the wait's return: unhook if still hooked (no timer here) */
     hooked = false;
     release()
  fi
}

proctype Reader() {
  byte seq, take;
  bool drained;
  do
  :: got == NDATA -> break
  :: else ->
     /* ws__io_rstate: two relaxed loads, no lock. */
     seq = rseq;
     drained = rdrained;
     if
     :: drained -> wait()
     :: else ->
        /* read(2) of ASK bytes */
        atomic {
          take = (data < ASK -> data : ASK);
          data = data - take;
          got = got + take
        }
        if
        :: take == 0 -> wait() /* EAGAIN */
        :: take > 0 && take < ASK ->
           /* ws__io_short */
           acquire();
#ifdef NOSEQ
           if :: registered -> rdrained = true :: else -> skip fi;
#else
           if
           :: registered && !rready && rseq == seq -> rdrained = true
           :: else -> skip
           fi;
#endif
           release()
        :: else -> skip
        fi
     fi
  od
}

init {
#ifdef STALE
  kreg = false;
#endif
  atomic {
    run Writer();
    run Holder();
    run Reader()
  }
  got == NDATA; /* a reader parked for good leaves init here: invalid */
  assert(written == NDATA && data == 0)
}
