/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Parked tasks: ws_sleep, ws_yield, ws_suspend, ws_resume (the mechanism
 * is core/tpark.c).
 */
#include "internal.h"

int ws_sleep(int64_t ns)
{
  return ws__tpark_sleep(ns);
}

bool ws_should_yield(void)
{
  return ws__tpark_should_yield();
}

int ws_yield(void)
{
  return ws__tpark_yield();
}

int ws_suspend(ws_suspend_fn fn, void *arg)
{
  return ws__tpark_suspend(fn, arg);
}

int ws_resume(ws_resume_t r)
{
  return ws__tpark_resume(r);
}
