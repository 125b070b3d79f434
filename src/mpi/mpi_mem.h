/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * mpi_mem.h - the one allocator pair of libwsched_mpi (issue #30; STYLE.md,
 * "One allocator family"). Every block of the layer comes from ws__mpi_alloc
 * and goes back through ws__mpi_free; no file of src/mpi, this one
 * included, calls the C library's allocator (tests/check_layers.py checks
 * it).
 *
 * Why a pair of its own: the library's family (src/platform/alloc.c,
 * ws__malloc and the rest, with the tests' fault injection) is internal to
 * libwsched, and libwsched_mpi uses the public API only. The pair goes
 * through the public ws_mem_alloc and ws_mem_free, which end in that family
 * and so in the allocator ws_set_allocator installs. The helpers below are
 * built on the pair.
 */
#ifndef WS_MPI_MEM_H
#define WS_MPI_MEM_H

#include "wsched.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* size bytes aligned to align (0 or a power of two; at least max_align_t's),
   or NULL. Any thread. */
static inline void *ws__mpi_alloc(size_t align, size_t size)
{
  return ws_mem_alloc(align, size); /* whole multiples of align: bag.c counts on it */
}

/* Gives back a block of ws__mpi_alloc (NULL: nothing). Any thread. */
static inline void ws__mpi_free(void *p)
{
  ws_mem_free(p);
}

/* n zeroed elements of size bytes, or NULL (out of memory, or n * size
   overflows). */
static inline void *ws__mpi_alloc_zero(size_t n, size_t size)
{
  if (size != 0 && n > SIZE_MAX / size)
    return NULL;
  void *p = ws__mpi_alloc(0, n * size);
  if (p != NULL)
    memset(p, 0, n * size);
  return p;
}

/* A block of new_bytes holding the first old_bytes of old, which is given
   back; NULL when out of memory (old is then kept). old may be NULL. */
static inline void *ws__mpi_regrow(void *old, size_t old_bytes, size_t new_bytes)
{
  void *p = ws__mpi_alloc(0, new_bytes);
  if (p == NULL)
    return NULL;
  if (old != NULL)
    memcpy(p, old, old_bytes < new_bytes ? old_bytes : new_bytes);
  ws__mpi_free(old);
  return p;
}

#endif /* WS_MPI_MEM_H */
