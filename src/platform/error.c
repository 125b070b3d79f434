/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/* ws_strerror: one table for every error code of include/wsched.h. */
#include "wsched.h"

const char *ws_strerror(int code)
{
  switch (code) {
  case WS_OK:
    return "success";
  case WS_EINVAL:
    return "invalid argument";
  case WS_ENOMEM:
    return "out of memory";
  case WS_ESHUTDOWN:
    return "pool is shut down and accepts no new root tasks";
  case WS_ETIMEDOUT:
    return "timed out";
  case WS_ECANCELED:
    return "task was cancelled";
  case WS_EBUSY:
    return "not possible in the current state";
  case WS_EDEADLK:
    return "the call would wait for itself";
  case WS_ESYS:
    return "the system refused a resource";
  case WS_ENOTSUP:
    return "not supported on this platform";
  case WS_ECLOSED:
    return "the channel is closed";
  case WS_EAGAIN:
    return "the call would have to wait";
  /* libwsched_mpi's codes (wsched_mpi.h): numbers only, the core knows no MPI. */
  case WS_ERR_MIN + 63: /* WS_MPI_EMISMATCH */
    return "MPI ranks registered different task types (names, order or payload limit)";
  case WS_ERR_MIN + 62: /* WS_MPI_ETHREAD */
    return "MPI was initialized without MPI_THREAD_SERIALIZED support";
  case WS_ERR_MIN + 61: /* WS_MPI_EMPI */
    return "an MPI call failed";
  default:
    return WS_IS_ERROR(code) ? "unknown wsched error" : "not a wsched code (a task's own value?)";
  }
}
