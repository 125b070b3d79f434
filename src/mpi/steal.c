/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * steal.c - libwsched_mpi between ranks: messages in and out, steal
 * requests, refusals, WORK and lifelines (mpi_internal.h maps the files;
 * the model's serve_message, send_work, on_work, thief_step and the push to
 * lifeline thieves, verify/term.pml; the tags and formats are proto.h's).
 *
 * Only shared parts of bags leave the rank. A rank whose pool is idle is a
 * thief: it asks random victims (one request at a time, at most
 * STEAL_TRIES per idle period), then registers with its lifeline buddies
 * (rank + 2^k mod size) and waits; a rank that has surplus pushes work to
 * its registered lifeline thieves. A WORK message is Safra's basic message
 * (term.c): its sender counts it up in the same mpi_lock section that takes
 * its tasks out of the bags, its receiver counts it down and turns black.
 * Messages are served by whoever holds mpi_lock: a worker between two tasks
 * (poll_duty, WS_MPI_PROGRESS_WORKERS) and the thread in ws_mpi_run when the
 * pool is idle, or that thread always (WS_MPI_PROGRESS_THREAD). Everything
 * here but ws__mpi_poll_duty runs under mpi_lock. A failed MPI call, or a
 * message that cannot be queued, ends this rank's run (ws__mpi_fail_run);
 * WORK that cannot be sent or queued aborts the job (its tasks would be
 * lost).
 */
#define _GNU_SOURCE
#include "mpi_internal.h"

#include "mpi_mem.h"
#include "proto.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define STEAL_TRIES 2 /* random steal attempts per idle period before lifelines */

/* Records the first failure of the run (rc != 0): the rank can no longer
   keep the protocol's promises (a lost PROBE, REPORT or TERM leaves a wave
   unfinished; a lost request, refusal or registration leaves a thief
   waiting), so it leaves the run with the error (run_loop, run_phase). */
void ws__mpi_fail_run(ws_mpi_t *m, int rc)
{
  if (rc != 0 && m->error == 0)
    m->error = rc;
}

static void reap_sends(ws_mpi_t *m)
{
  size_t j = 0;
  for (size_t i = 0; i < m->nsends; i++) {
    int done = 0;
    if (MPI_Test(&m->sends[i].req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      ws__mpi_fail_run(m, WS_MPI_EMPI);
      done = 0; /* the request is kept: MPI may still read its buffer */
    }
    if (done)
      ws__mpi_free(m->sends[i].buf);
    else
      m->sends[j++] = m->sends[i];
  }
  m->nsends = j;
}

/* Sends len bytes of buf (owned by the call from now on; may be NULL when
   len is 0) to dest. */
int ws__mpi_send_msg(ws_mpi_t *m, int dest, int tag, unsigned char *buf, size_t len)
{
  if (m->nsends == m->sends_cap) {
    reap_sends(m);
    if (m->nsends == m->sends_cap) {
      size_t ncap = m->sends_cap ? m->sends_cap * 2 : 16;
      pending_send *ns = ws__mpi_regrow(m->sends, m->sends_cap * sizeof *ns, ncap * sizeof *ns);
      if (ns == NULL) {
        ws__mpi_free(buf);
        return WS_ENOMEM;
      }
      m->sends = ns;
      m->sends_cap = ncap;
    }
  }
  pending_send *p = &m->sends[m->nsends];
  int rc = MPI_Isend(buf, (int)len, MPI_BYTE, dest, tag, m->comm, &p->req);
  if (rc != MPI_SUCCESS) {
    ws__mpi_free(buf);
    return WS_MPI_EMPI;
  }
  p->buf = buf;
  m->nsends++;
  m->sent_to[dest]++;
  m->st.msgs_sent++;
  m->st.bytes_sent += len;
  return 0;
}

/* Takes up to `chunk` tasks from the shared parts of this rank's bags (the
   bag with the largest shared part first) into a new WORK buffer. Returns
   the number of tasks; *out and *len describe the buffer (NULL when 0). */
static unsigned export_tasks(ws_mpi_t *m, unsigned char **out, size_t *len)
{
  *out = NULL;
  *len = 0;
  unsigned char *buf = NULL;
  size_t bytes = sizeof(uint32_t);
  unsigned n = 0;
  pthread_mutex_lock(&m->bags_lock);
  ws__mpi_bag *best = NULL;
  uint64_t most = 0;
  for (ws__link *e = m->bags.head; e != NULL; e = e->next) {
    ws__mpi_bag *b = WS__CONTAINER(e, ws__mpi_bag, link);
    uint64_t s = atomic_load_explicit(&b->shared_hint, memory_order_relaxed); /* a hint */
    if (s > most) {
      most = s;
      best = b;
    }
  }
  if (best != NULL && (buf = ws__mpi_alloc(0, m->work_cap)) != NULL)
    n = ws__mpi_bag_take(best, m->chunk, buf, m->work_cap, &bytes);
  pthread_mutex_unlock(&m->bags_lock);
  if (n == 0) {
    ws__mpi_free(buf);
    return 0;
  }
  uint32_t n32 = n;
  memcpy(buf, &n32, sizeof n32);
  *out = buf;
  *len = bytes;
  return n;
}

/* send_work: a WORK (or WORK_LIFE) message to dest when this rank has
   surplus. Returns the number of tasks sent (0: none to give). */
static unsigned send_work(ws_mpi_t *m, int dest, int tag)
{
  unsigned char *buf;
  size_t len;
  unsigned n = export_tasks(m, &buf, &len);
  if (n == 0)
    return 0;
  if (ws__mpi_send_msg(m, dest, tag, buf, len) != 0) {
    /* Lost tasks cannot be reported to anybody: abort the job loudly
       rather than return a wrong count. */
    fprintf(stderr, "wsched_mpi: rank %d: sending work to rank %d failed\n", m->rank, dest);
    MPI_Abort(m->comm, 1);
  }
  m->count++; /* Safra: a basic message sent */
  m->st.tasks_out += n;
  return n;
}

/* on_work: tasks arrived; they become a new runner. Under mpi_lock. */
static void on_work(ws_mpi_t *m, const unsigned char *buf, size_t len)
{
  m->count--; /* Safra: a basic message received */
  m->black = true;
  uint32_t n;
  memcpy(&n, buf, sizeof n);
  ws__mpi_bag *b = ws__mpi_bag_make(m);
  size_t off = sizeof n;
  for (uint32_t i = 0; b != NULL && i < n; i++) {
    ws__mpi_slot_hdr h;
    if (off + sizeof h > len)
      break;
    memcpy(&h, buf + off, sizeof h);
    if ((int)h.type >= m->ntypes || h.len > m->opt.max_payload || off + sizeof h + h.len > len ||
        ws__mpi_bag_push(b, h.type, buf + off + sizeof h, h.len) != 0) {
      ws__mpi_bag_free(b);
      b = NULL;
      break;
    }
    off += sizeof h + h.len;
  }
  if (b == NULL || off != len || ws__mpi_runner_start(m, b) != 0) {
    fprintf(stderr, "wsched_mpi: rank %d: could not queue %u received tasks\n", m->rank, n);
    MPI_Abort(m->comm, 1);
  }
  m->st.tasks_in += n;
  m->tries = 0; /* work: a new idle period starts from random steals again */
}

/* The outstanding steal request was answered. */
static void steal_answered(ws_mpi_t *m)
{
  m->waiting = -1;
  m->st.steal_wait_ns += ws__mpi_now_ns() - m->steal_sent_ns;
}

/* thief_step: one move of an idle rank looking for work. */
bool ws__mpi_thief_step(ws_mpi_t *m)
{
  if (m->size == 1 || m->waiting >= 0)
    return false;
  if (m->tries < STEAL_TRIES) {
    int v = (int)(ws__mpi_rng_next(&m->rng) % (uint64_t)(m->size - 1));
    if (v >= m->rank)
      v++;
    m->tries++;
    m->waiting = v;
    m->st.steals_sent++;
    m->steal_sent_ns = ws__mpi_now_ns();
    ws__mpi_fail_run(m, ws__mpi_send_msg(m, v, TAG_REQ, NULL, 0));
    return true;
  }
  bool sent = false;
  for (int k = 1; k < m->size; k *= 2) {
    int b = (m->rank + k) % m->size;
    if (!m->life_reg[b]) {
      m->life_reg[b] = true;
      m->st.lifeline_sent++;
      ws__mpi_fail_run(m, ws__mpi_send_msg(m, b, TAG_LIFE, NULL, 0));
      sent = true;
    }
  }
  return sent;
}

/* serve_message: handles one received message. */
static void serve_message(ws_mpi_t *m, int src, int tag, const unsigned char *buf, size_t len)
{
  if (m->opt.delay_ns > 0)
    ws__mpi_sleep_ns((int64_t)(ws__mpi_rng_next(&m->rng) % (uint64_t)(m->opt.delay_ns + 1)));
  m->recv_from[src]++;
  m->st.msgs_recv++;
  m->st.bytes_recv += len;
  switch (tag) {
  case TAG_REQ:
    if (send_work(m, src, TAG_WORK) == 0)
      ws__mpi_fail_run(m, ws__mpi_send_msg(m, src, TAG_NONE, NULL, 0));
    break;
  case TAG_NONE:
    if (m->waiting == src)
      steal_answered(m);
    break;
  case TAG_WORK:
    if (m->waiting == src)
      steal_answered(m);
    m->st.steals_ok++;
    on_work(m, buf, len);
    break;
  case TAG_WORK_LIFE:
    m->life_reg[src] = false;
    on_work(m, buf, len);
    break;
  case TAG_LIFE:
    if (!m->life_thief[src] && send_work(m, src, TAG_WORK_LIFE) == 0) {
      m->life_thief[src] = true;
      m->nlife_thieves++;
    }
    break;
  case TAG_PROBE:
    ws__mpi_wave_begin(m);
    break;
  case TAG_REPORT:
    ws__mpi_on_report(m, buf);
    break;
  case TAG_TERM:
    ws__mpi_on_term(m);
    break;
  default:
    break;
  }
}

/* The length of the message s describes, which must fit in rbuf: every
   rank sends at most rbuf_cap bytes (a larger one is a broken invariant:
   the job aborts rather than overflow the buffer). */
int ws__mpi_recv_len(ws_mpi_t *m, const MPI_Status *s)
{
  int len = 0;
  MPI_Get_count(s, MPI_BYTE, &len);
  if (len < 0 || (size_t)len > m->rbuf_cap) {
    fprintf(stderr,
            "wsched_mpi: rank %d: a message of %d bytes from rank %d (tag %d), larger than %zu\n",
            m->rank, len, s->MPI_SOURCE, s->MPI_TAG, m->rbuf_cap);
    MPI_Abort(m->comm, 1);
  }
  return len;
}

/* Receives and serves every message already here. Returns how many. Does
   nothing once the run failed on this rank. */
int ws__mpi_serve_all(ws_mpi_t *m)
{
  int served = 0;
  while (m->error == 0) {
    int flag = 0;
    MPI_Status s;
    if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, m->comm, &flag, &s) != MPI_SUCCESS) {
      ws__mpi_fail_run(m, WS_MPI_EMPI);
      return served;
    }
    if (!flag)
      break;
    int len = ws__mpi_recv_len(m, &s);
    if (MPI_Recv(m->rbuf, len, MPI_BYTE, s.MPI_SOURCE, s.MPI_TAG, m->comm, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS) {
      ws__mpi_fail_run(m, WS_MPI_EMPI);
      return served;
    }
    serve_message(m, s.MPI_SOURCE, s.MPI_TAG, m->rbuf, (size_t)len);
    served++;
  }
  /* Lifeline thieves get work as soon as there is some. */
  for (int t = 0; m->nlife_thieves > 0 && t < m->size; t++) {
    if (m->life_thief[t] && send_work(m, t, TAG_WORK_LIFE) > 0) {
      m->life_thief[t] = false;
      m->nlife_thieves--;
    }
  }
  /* Tasks that keep work of their own offer some while this is set. */
  atomic_store_explicit(&m->remote_want, m->nlife_thieves > 0, memory_order_relaxed); /* a hint */
  reap_sends(m);
  m->st.polls++;
  return served;
}

/* A worker between two tasks (WS_MPI_PROGRESS_WORKERS). Not inlined: the
   callers' fast paths then need no saved registers (ws_mpi_share runs once
   per item of a walk). */
__attribute__((noinline)) void ws__mpi_poll_duty(ws_mpi_t *m)
{
  if (m->opt.progress != WS_MPI_PROGRESS_WORKERS ||
      !atomic_load_explicit(&m->polling, memory_order_acquire)) /* pairs with run_phase */
    return;
  if (pthread_mutex_trylock(&m->mpi_lock) != 0)
    return; /* somebody is serving already */
  uint64_t t0 = ws__mpi_now_ns();
  ws__mpi_serve_all(m);
  m->st.serve_ns += ws__mpi_now_ns() - t0;
  pthread_mutex_unlock(&m->mpi_lock);
}
