/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/* ws_version: the library's own WS_VERSION, to compare with the header's. */
#include "wsched.h"

int ws_version(void)
{
  return WS_VERSION;
}
