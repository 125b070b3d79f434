/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * term.c - libwsched_mpi's termination detection (mpi_internal.h maps the
 * files; the model's wave_begin, wave_step, REPORT and TERM,
 * verify/term.pml; docs/DISTRIBUTED.md argues it is neither early nor
 * late).
 *
 * Dijkstra-Safra (EWD998) over the WORK messages, the only messages that
 * make a rank active: counter = WORK sent - WORK received, black on
 * receiving WORK (steal.c keeps both); rank r is visited by a wave (PROBE
 * down the binary heap of ranks, REPORT up it: 2 log2(size) hops, not a
 * ring's size) and reports only when passive (pool idle, checked under
 * mpi_lock, the only place work enters an idle rank). Rank 0 sends TERM down
 * the tree when a wave comes back white with count sum 0. Then every rank
 * drains the control messages still in flight (per-peer send counts
 * exchanged with MPI_Alltoall) so that the communicator is empty for the
 * next ws_mpi_run. Everything here runs under mpi_lock.
 */
#define _GNU_SOURCE
#include "mpi_internal.h"

#include "mpi_mem.h"
#include "proto.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Sends an empty message with `tag` to this rank's children in the tree. */
static void tree_send(ws_mpi_t *m, int tag)
{
  for (int c = 2 * m->rank + 1; c <= 2 * m->rank + 2 && c < m->size; c++)
    ws__mpi_fail_run(m, ws__mpi_send_msg(m, c, tag, NULL, 0));
}

/* A wave reaches this rank (rank 0: starts there): pass it down. */
void ws__mpi_wave_begin(ws_mpi_t *m)
{
  m->in_wave = true;
  m->pending = 0;
  m->wave_q = 0;
  m->wave_black = false;
  for (int c = 2 * m->rank + 1; c <= 2 * m->rank + 2 && c < m->size; c++)
    m->pending++;
  tree_send(m, TAG_PROBE);
}

/* A child's REPORT: its subtree's sum and colour join this rank's. */
void ws__mpi_on_report(ws_mpi_t *m, const unsigned char *buf)
{
  int64_t t[2];
  memcpy(t, buf, sizeof t);
  m->wave_q += t[0];
  m->wave_black |= t[1] != 0;
  m->pending--;
}

/* TERM from the parent: pass it down; this rank's run ends. */
void ws__mpi_on_term(ws_mpi_t *m)
{
  tree_send(m, TAG_TERM);
  m->terminated = true;
}

/* wave_step: Safra's rules over a spanning tree (the binary heap of ranks:
   children 2r+1 and 2r+2), on a passive rank (the caller checked). A wave
   goes down as PROBE messages; a rank reports, once passive and once all its
   children reported, the sum of its subtree's counts and whether any of it
   was black, then turns white. Rank 0 declares termination when the reports
   sum to minus its own count and nobody was black. Returns true if it did
   something. */
bool ws__mpi_wave_step(ws_mpi_t *m)
{
  if (m->rank == 0 && !m->in_wave) {
    m->black = false; /* rank 0 turns white as it starts a wave */
    m->st.token_rounds++;
    ws__mpi_wave_begin(m);
    return true;
  }
  if (!m->in_wave || m->pending > 0)
    return false;
  m->in_wave = false;
  int64_t q = m->wave_q + m->count;
  bool black = m->wave_black || m->black;
  m->black = false;
  if (m->rank == 0) {
    if (!black && q == 0) {
      tree_send(m, TAG_TERM);
      m->terminated = true;
    }
    return true; /* otherwise the next call starts another wave */
  }
  unsigned char *buf = ws__mpi_alloc(0, 2 * sizeof(int64_t));
  if (buf == NULL) {
    ws__mpi_fail_run(m, WS_ENOMEM);
    return true;
  }
  int64_t t[2] = {q, black ? 1 : 0};
  memcpy(buf, t, sizeof t);
  ws__mpi_fail_run(m, ws__mpi_send_msg(m, (m->rank - 1) / 2, TAG_REPORT, buf, sizeof t));
  return true;
}

/* After TERM: no WORK is in flight, but requests, refusals, lifeline
   registrations and TERM may be. Every rank tells every other how many
   messages it sent it this run, then receives exactly the missing ones, so
   the duplicate communicator is empty when ws_mpi_run returns. */
int ws__mpi_drain(ws_mpi_t *m)
{
  uint64_t *expect = ws__mpi_alloc_zero((size_t)m->size, sizeof *expect);
  if (expect == NULL)
    return WS_ENOMEM;
  int rc = ws__mpi_err(MPI_Alltoall(m->sent_to, 1, MPI_UINT64_T, expect, 1, MPI_UINT64_T, m->comm));
  for (int r = 0; rc == 0 && r < m->size; r++) {
    while (rc == 0 && m->recv_from[r] < expect[r]) {
      MPI_Status s;
      rc = ws__mpi_err(MPI_Probe(r, MPI_ANY_TAG, m->comm, &s));
      if (rc != 0)
        break;
      int len = ws__mpi_recv_len(m, &s);
      rc = ws__mpi_err(MPI_Recv(m->rbuf, len, MPI_BYTE, r, s.MPI_TAG, m->comm, MPI_STATUS_IGNORE));
      if (rc != 0)
        break;
      m->recv_from[r]++;
      m->st.msgs_recv++;
      m->st.bytes_recv += (uint64_t)len;
      if (s.MPI_TAG == TAG_WORK || s.MPI_TAG == TAG_WORK_LIFE) {
        fprintf(stderr, "wsched_mpi: rank %d: work from rank %d after termination\n", m->rank, r);
        MPI_Abort(m->comm, 1);
      }
    }
  }
  ws__mpi_free(expect);
  if (rc != 0)
    return rc;
  /* Every message sent was received now, so every send completes. */
  size_t j = 0;
  for (size_t i = 0; i < m->nsends; i++) {
    if (MPI_Wait(&m->sends[i].req, MPI_STATUS_IGNORE) == MPI_SUCCESS)
      ws__mpi_free(m->sends[i].buf);
    else
      m->sends[j++] = m->sends[i]; /* MPI may still read the buffer: kept */
  }
  m->nsends = j;
  return j == 0 ? 0 : WS_MPI_EMPI;
}
