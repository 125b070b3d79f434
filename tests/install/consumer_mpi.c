/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/* A program that uses an installed libwsched_mpi (test_install.sh runs it on
   2 ranks): rank 0 spawns ROOTS distributable tasks, each the root of a
   binary tree of depth DEPTH whose tasks spawn their children; every task
   counts itself, and after ws_mpi_run the counts summed over the ranks must
   be exactly the number of tree nodes. Built with CMake
   (find_package(wsched COMPONENTS mpi)) and with pkg-config (wsched_mpi),
   against the shared and the static library. It calls no function of
   libwsched itself (the pool's size comes from WS_WORKERS), so that,
   linked --as-needed, it reaches libwsched.so only through
   libwsched_mpi.so, as such a program does. */
#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <wsched_mpi.h>

#define ROOTS 4
#define DEPTH 9 /* 2^(DEPTH+1)-1 = 1023 tasks a tree */

static int node_id;
static atomic_uint_fast64_t counted;
static atomic_int spawn_failed;

static void node(ws_mpi_t *m, const void *payload, size_t len)
{
  unsigned depth;
  atomic_fetch_add(&counted, 1);
  if (len != sizeof depth) {
    atomic_store(&spawn_failed, 1);
    return;
  }
  memcpy(&depth, payload, sizeof depth);
  if (depth == 0)
    return;
  depth--;
  for (int i = 0; i < 2; i++)
    if (ws_mpi_spawn(m, node_id, &depth, sizeof depth) != 0)
      atomic_store(&spawn_failed, 1);
}

int main(int argc, char **argv)
{
  int provided, rank, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ws_mpi_options_t mo;
  ws_mpi_options_init(&mo);
  mo.pool = NULL; /* the defaults: WS_WORKERS workers */
  ws_mpi_t *m;
  int rc = ws_mpi_create(&m, MPI_COMM_WORLD, &mo);
  if (rc != 0) {
    fprintf(stderr, "rank %d: ws_mpi_create: %d\n", rank, rc);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  node_id = ws_mpi_register(m, "node", node);
  if (node_id < 0 || ws_mpi_rank(m) != rank || ws_mpi_size(m) != size) {
    fprintf(stderr, "rank %d: register %d, rank %d, size %d\n", rank, node_id, ws_mpi_rank(m),
            ws_mpi_size(m));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  unsigned depth = DEPTH;
  if (rank == 0)
    for (int i = 0; i < ROOTS; i++)
      if (ws_mpi_spawn(m, node_id, &depth, sizeof depth) != 0)
        atomic_store(&spawn_failed, 1);
  if ((rc = ws_mpi_run(m)) != 0) {
    fprintf(stderr, "rank %d: ws_mpi_run: %d\n", rank, rc);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  ws_mpi_stats_t st;
  ws_mpi_stats(m, &st);
  uint64_t v[3] = {atomic_load(&counted), st.tasks, (uint64_t)atomic_load(&spawn_failed)};
  uint64_t mine = v[0];
  if ((rc = ws_mpi_allreduce_u64(m, v, 3, WS_MPI_SUM)) != 0) {
    fprintf(stderr, "rank %d: ws_mpi_allreduce_u64: %d\n", rank, rc);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  ws_mpi_destroy(m);
  const uint64_t want = (uint64_t)ROOTS * ((2u << DEPTH) - 1);
  int ok = v[0] == want && v[1] == want && v[2] == 0;
  if (rank == 0 || !ok)
    printf("rank %d of %d: %llu tasks counted on all ranks (%llu here), want %llu: %s\n", rank,
           size, (unsigned long long)v[0], (unsigned long long)mine, (unsigned long long)want,
           ok ? "ok" : "WRONG");
  MPI_Finalize();
  return ok ? 0 : 1;
}
