/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The allocator hook (wsched.h, "Memory"): ws_set_allocator replaces the
 * pair at the end of the library's allocator family (platform/alloc.c),
 * and ws_mem_alloc and ws_mem_free lend that family to code built on the
 * public API (libwsched_mpi's src/mpi/mpi_mem.h).
 */
#include "platform.h"
#include "task.h"

int ws_set_allocator(ws_alloc_fn alloc_fn, ws_free_fn free_fn, void *user)
{
  if ((alloc_fn == NULL) != (free_fn == NULL))
    return WS_EINVAL;
  /* A thread outside the pools keeps the task records it freed (a future
     it released) in a cache of its own until it exits, and what overflows
     it in a process-wide depot (data/task.c). The caller's own cache and
     that depot are what it can give back now: without this, a program
     that released a future on its main thread could never swap the
     allocator again. Other threads' caches keep the answer WS_EBUSY until
     those threads exit. */
  ws__task_tls_drain();
  return ws__alloc_replace(alloc_fn, free_fn, user);
}

void *ws_mem_alloc(size_t align, size_t size)
{
  if ((align & (align - 1)) != 0)
    return NULL; /* not a power of two (0 is: the default) */
  return ws__aligned_alloc(align, size);
}

void ws_mem_free(void *ptr)
{
  ws__free(ptr);
}
