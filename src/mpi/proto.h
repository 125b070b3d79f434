/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * proto.h - the messages ranks exchange (libwsched_mpi; docs/DISTRIBUTED.md
 * describes the protocol, verify/term.pml models it). All of them travel on
 * the context's duplicate communicator, as MPI_BYTE.
 */
#ifndef WS_MPI_PROTO_H
#define WS_MPI_PROTO_H

enum {
  TAG_REQ = 1, /* steal request, empty; answered WORK or NONE */
  TAG_NONE, /* refusal, empty */
  TAG_WORK, /* tasks, answering a request: uint32 n, then n (slot header, payload) */
  TAG_LIFE, /* lifeline registration, empty */
  TAG_WORK_LIFE, /* tasks pushed to a lifeline thief, as TAG_WORK */
  TAG_PROBE, /* a termination wave, down the tree, empty */
  TAG_REPORT, /* the wave's answer, up the tree: int64 q, int64 black */
  TAG_TERM /* terminated, down the tree, empty */
};

#endif /* WS_MPI_PROTO_H */
