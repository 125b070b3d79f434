/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The floor for any join reached through a call: a "join" that schedules
 * nothing and calls both halves, one after the other, through their
 * pointers. It lives alone in this file, and wsbench is built without
 * link-time optimisation, so the compiler cannot inline it into its caller,
 * just as it cannot inline ws_join from libwsched. See joincost.c.
 */
#include "wsbench.h"

__attribute__((noinline)) int wb_null_join(ws_task_fn fa, void *a, ws_task_fn fb, void *b)
{
  int ra = fa(a);
  int rb = fb(b);
  return ra != 0 ? ra : rb;
}
