/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The CPU budget of the process: how many workers a pool gets by default,
 * the CPUs of the affinity mask, and pinning a thread to one of them.
 *
 * The default follows Go 1.25's GOMAXPROCS rule: the CPUs the process may
 * run on (its affinity mask), lowered to the cgroup CPU bandwidth limit
 * rounded up. A container limited to 4 CPUs on a 64-core node gets 4
 * workers, not 64: with 64 the kernel would throttle the whole group for
 * most of each period once the quota is spent, and every worker would stall
 * together — the worst case for a scheduler that assumes its workers run.
 * Rounding up keeps the fraction: 1.5 CPUs give 2 workers, and a limit below
 * one CPU still gets one.
 *
 * Two deliberate differences from Go:
 *   - Go reads only the leaf cgroup; we walk up to the root of the mounted
 *     hierarchy and take the smallest limit, because a parent's quota binds
 *     its children too (systemd slices, Kubernetes pod-level limits).
 *   - Go raises a cgroup-derived count to at least 2; our floor is 1, so
 *     that a quota below one CPU (0.2) gives one worker: a second one could
 *     only run by spending the same small quota.
 * Go also ignores the mount's root (field 4 of mountinfo); we strip it from
 * the process's cgroup path, which is what locates the files when a
 * container sees a bind mount of its own cgroup without a cgroup namespace.
 *
 * Everything here is read once per pool creation, never on a hot path, so
 * the code favours plain and strict parsing over speed: a malformed file is
 * an error (WS_EINVAL), and an error only means "no cap" to
 * ws__default_workers. Allocations use ws__malloc_quiet, not ws__malloc: a
 * failure here is not a failure of ws_pool_create (it only loses the cap),
 * so the allocation fault injector of the tests must not count them.
 *
 * Linux-specific: sched_getaffinity, /proc and the cgroup file systems.
 */
#include "env.h"
#include "platform.h"
#include "topology.h"

#include "wsched.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Affinity                                                             */

/* Largest CPU count we size a mask for. The kernel's own limit
   (CONFIG_NR_CPUS) is a few thousand on distribution kernels; this leaves
   room, and bounds the mask at 512 KiB. */
#define WS__MAX_MASK_CPUS (1 << 22)

/* The calling thread's affinity mask in a buffer sized for the kernel's
   mask: sched_getaffinity fails with EINVAL while the buffer is smaller
   than the kernel's, so the size doubles from CPU_SETSIZE until it fits.
   Returns the mask (free with CPU_FREE) and its size in bytes, or NULL with
   *err set. Any thread. */
static cpu_set_t *ws__affinity_get(size_t *size, int *err)
{
  for (size_t ncpu = CPU_SETSIZE; ncpu <= WS__MAX_MASK_CPUS; ncpu *= 2) {
    cpu_set_t *set = CPU_ALLOC(ncpu);
    if (set == NULL) {
      *err = WS_ENOMEM;
      return NULL;
    }
    size_t sz = CPU_ALLOC_SIZE(ncpu);
    if (sched_getaffinity(0, sz, set) == 0) {
      *size = sz;
      return set;
    }
    int e = errno;
    CPU_FREE(set);
    if (e != EINVAL)
      break;
  }
  *err = WS_ESYS;
  return NULL;
}

unsigned ws__affinity_count(void)
{
  size_t size;
  int err;
  cpu_set_t *set = ws__affinity_get(&size, &err);
  if (set != NULL) {
    int n = CPU_COUNT_S(size, set);
    CPU_FREE(set);
    if (n > 0)
      return (unsigned)n;
  }
  /* No mask (seccomp, exotic kernels): every online CPU. */
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (unsigned)n : 1u;
}

int ws__affinity_list(int *cpus, unsigned max)
{
  size_t size;
  int err;
  cpu_set_t *set = ws__affinity_get(&size, &err);
  if (set == NULL)
    return err;
  unsigned n = 0;
  /* size * 8 bits <= WS__MAX_MASK_CPUS, so every index fits an int. */
  for (size_t i = 0; i < size * CHAR_BIT && n < max; i++)
    if (CPU_ISSET_S(i, size, set))
      cpus[n++] = (int)i;
  CPU_FREE(set);
  return (int)n;
}

int ws__pin_self(int cpu)
{
  if (cpu < 0 || cpu >= WS__MAX_MASK_CPUS)
    return WS_EINVAL;
  size_t ncpu = (size_t)cpu + 1;
  cpu_set_t *set = CPU_ALLOC(ncpu);
  if (set == NULL)
    return WS_ENOMEM;
  size_t size = CPU_ALLOC_SIZE(ncpu);
  CPU_ZERO_S(size, set);
  CPU_SET_S((size_t)cpu, size, set);
  /* On Linux pid 0 means the calling thread, not the whole process: the
     other threads keep their masks. */
  int rc = sched_setaffinity(0, size, set);
  CPU_FREE(set);
  return rc == 0 ? 0 : WS_ESYS;
}

/* ------------------------------------------------------------------ */
/* Reading files, under an optional fake root                           */

/* root + a + b + c in a new string, or NULL when out of memory. */
static char *ws__cg_concat(const char *root, const char *a, const char *b, const char *c)
{
  size_t lr = strlen(root), la = strlen(a), lb = strlen(b), lc = strlen(c);
  char *s = ws__malloc_quiet(lr + la + lb + lc + 1);
  if (s == NULL)
    return NULL;
  memcpy(s, root, lr);
  memcpy(s + lr, a, la);
  memcpy(s + lr + la, b, lb);
  memcpy(s + lr + la + lb, c, lc);
  s[lr + la + lb + lc] = '\0';
  return s;
}

/* Reads the small file root + dir + "/" + name into buf as a string.
   Returns 0; 1 when it does not exist; WS_EINVAL when it does not fit in
   buf or holds a NUL byte; WS_ESYS for any other failure; WS_ENOMEM. */
static int ws__cg_read_small(const char *root, const char *dir, const char *name, char *buf,
                             size_t len)
{
  char *path = ws__cg_concat(root, dir, "/", name);
  if (path == NULL)
    return WS_ENOMEM;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  int open_errno = errno;
  ws__free(path);
  if (fd < 0)
    return (open_errno == ENOENT || open_errno == ENOTDIR) ? 1 : WS_ESYS;
  size_t n = 0;
  int rc = 0;
  for (;;) {
    char extra;
    /* The last byte of buf is kept for the NUL; once buf is full, one more
       byte read tells "exactly full" from "too long". */
    char *dst = n < len - 1 ? buf + n : &extra;
    size_t want = n < len - 1 ? len - 1 - n : 1;
    ssize_t r = read(fd, dst, want);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      rc = WS_ESYS;
      break;
    }
    if (r == 0)
      break;
    if (dst == &extra) {
      rc = WS_EINVAL;
      break;
    }
    n += (size_t)r;
  }
  close(fd);
  buf[n] = '\0';
  if (rc == 0 && strlen(buf) != n)
    rc = WS_EINVAL;
  return rc;
}

/* Parses a decimal number of at most INT64_MAX at *s and advances *s past
   it. False when there is no digit or it overflows. */
static bool ws__cg_number(const char **s, uint64_t *v)
{
  const char *p = *s;
  uint64_t x = 0;
  if (*p < '0' || *p > '9')
    return false;
  for (; *p >= '0' && *p <= '9'; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (x > ((uint64_t)INT64_MAX - d) / 10)
      return false;
    x = x * 10 + d;
  }
  *s = p;
  *v = x;
  return true;
}

/* Only a trailing newline (or nothing) is left. */
static bool ws__cg_at_end(const char *s)
{
  return s[0] == '\0' || (s[0] == '\n' && s[1] == '\0');
}

/* True when s is digits, or with `sep` != 0 digits, sep, digits (the
   "major:minor" of mountinfo). */
static bool ws__cg_digits(const char *s, char sep)
{
  const char *p = s;
  while (*p >= '0' && *p <= '9')
    p++;
  if (p == s)
    return false;
  if (sep != '\0') {
    if (*p != sep)
      return false;
    return ws__cg_digits(p + 1, '\0');
  }
  return *p == '\0';
}

/* ------------------------------------------------------------------ */
/* The limit files                                                      */

/* cgroup v2: cpu.max in dir holds "<quota> <period>" in microseconds,
   quota "max" for no limit. Returns 1 with *lim, 0 (no limit or no file
   here: the controller is not enabled at this level), or an error. */
static int ws__cg_v2_limit(const char *root, const char *dir, double *lim)
{
  char buf[64];
  int rc = ws__cg_read_small(root, dir, "cpu.max", buf, sizeof buf);
  if (rc != 0)
    return rc == 1 ? 0 : rc;
  const char *s = buf;
  uint64_t quota = 0, period;
  bool unlimited = strncmp(s, "max", 3) == 0;
  if (unlimited)
    s += 3;
  else if (!ws__cg_number(&s, &quota))
    return WS_EINVAL;
  if (*s++ != ' ')
    return WS_EINVAL;
  if (!ws__cg_number(&s, &period) || !ws__cg_at_end(s))
    return WS_EINVAL;
  /* The kernel refuses a zero period or quota; seeing one means the file is
     not what we think it is. */
  if (period == 0 || (!unlimited && quota == 0))
    return WS_EINVAL;
  if (unlimited)
    return 0;
  *lim = (double)quota / (double)period;
  return 1;
}

/* cgroup v1: cpu.cfs_quota_us ("-1" for no limit) and cpu.cfs_period_us in
   dir. Returns 1 with *lim, 0 (no limit, or no files here), or an error. */
static int ws__cg_v1_limit(const char *root, const char *dir, double *lim)
{
  char buf[64];
  int rc = ws__cg_read_small(root, dir, "cpu.cfs_quota_us", buf, sizeof buf);
  if (rc != 0)
    return rc == 1 ? 0 : rc;
  const char *s = buf;
  uint64_t quota, period;
  if (s[0] == '-') {
    s++;
    if (!ws__cg_number(&s, &quota) || !ws__cg_at_end(s) || quota != 1)
      return WS_EINVAL;
    return 0; /* -1: no limit */
  }
  if (!ws__cg_number(&s, &quota) || !ws__cg_at_end(s) || quota == 0)
    return WS_EINVAL;
  /* A quota without its period (both always exist together) is malformed. */
  rc = ws__cg_read_small(root, dir, "cpu.cfs_period_us", buf, sizeof buf);
  if (rc != 0)
    return rc == 1 ? WS_EINVAL : rc;
  s = buf;
  if (!ws__cg_number(&s, &period) || !ws__cg_at_end(s) || period == 0)
    return WS_EINVAL;
  *lim = (double)quota / (double)period;
  return 1;
}

/* Reads the limit of every cgroup from dir (the process's own) up to the
   first `top` bytes of dir (the mount point) and keeps the smallest.
   Modifies dir. Returns 1 with *cpus, 0, or an error. */
static int ws__cg_walk(const char *root, int version, char *dir, size_t top, double *cpus)
{
  size_t len = strlen(dir);
  double best = 0;
  int found = 0;
  for (;;) {
    double lim = 0;
    int rc = version == 1 ? ws__cg_v1_limit(root, dir, &lim) : ws__cg_v2_limit(root, dir, &lim);
    if (rc < 0)
      return rc;
    if (rc == 1 && (!found || lim < best)) {
      best = lim;
      found = 1;
    }
    if (len <= top) {
      if (found)
        *cpus = best;
      return found;
    }
    /* Up one level: cut at the last '/'. Everything past `top` starts with
       a '/', so the cut never goes above the mount point. */
    while (len > top && dir[len - 1] != '/')
      len--;
    if (len > top)
      len--;
    dir[len] = '\0';
  }
}

/* ------------------------------------------------------------------ */
/* Locating the process's cgroup                                        */

/* What /proc/self/cgroup and /proc/self/mountinfo told us, per version
   (index 1 and 2; 0 unused). */
typedef struct ws__cg_find {
  char *path[3]; /* the process's cgroup path within the hierarchy */
  char *dir[3]; /* mount point + path below the mount's root */
  size_t top[3]; /* length of the mount point within dir */
  size_t rootlen[3]; /* length of the chosen mount's root, longest wins */
} ws__cg_find;

/* True when comma-separated `list` contains exactly `item`. */
static bool ws__cg_list_has(const char *list, const char *item)
{
  size_t n = strlen(item);
  for (const char *p = list;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
    if (len == n && memcmp(p, item, n) == 0)
      return true;
    if (comma == NULL)
      return false;
    p = comma + 1;
  }
}

/* Reads one line with getline into *line and strips its newline. Returns
   1, 0 at the end of the file (or on a read error: the caller checks
   ferror), or WS_EINVAL for a line holding a NUL byte. */
static int ws__cg_line(FILE *f, char **line, size_t *cap)
{
  ssize_t n = getline(line, cap, f);
  if (n < 0)
    return 0;
  if (n > 0 && (*line)[n - 1] == '\n')
    (*line)[--n] = '\0';
  return strlen(*line) == (size_t)n ? 1 : WS_EINVAL;
}

/* Opens root + name for reading lines. Returns the stream, or NULL with
   *rc = 0 (the file does not exist) or an error. */
static FILE *ws__cg_open(const char *root, const char *name, int *rc)
{
  char *path = ws__cg_concat(root, name, "", "");
  if (path == NULL) {
    *rc = WS_ENOMEM;
    return NULL;
  }
  FILE *f = fopen(path, "re"); /* e: O_CLOEXEC, a library must not leak fds */
  int e = errno;
  ws__free(path);
  if (f == NULL)
    *rc = (e == ENOENT || e == ENOTDIR) ? 0 : WS_ESYS;
  return f;
}

/* /proc/self/cgroup: one line per hierarchy, "id:controllers:path". The
   v2 hierarchy has id 0 and no controllers; a v1 hierarchy whose list
   holds "cpu" carries the CPU controller. Fills f->path. Returns 1 when at
   least one was found, 0 when none, or an error. */
static int ws__cg_parse_self(const char *root, ws__cg_find *f)
{
  int rc = 0;
  FILE *in = ws__cg_open(root, "/proc/self/cgroup", &rc);
  if (in == NULL)
    return rc;
  char *line = NULL;
  size_t cap = 0;
  int got;
  while ((got = ws__cg_line(in, &line, &cap)) > 0) {
    if (line[0] == '\0')
      continue;
    char *c1 = strchr(line, ':');
    char *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
    /* The path is everything after the second colon: cgroup names may
       contain colons themselves. */
    if (c1 == NULL || c2 == NULL || c1 == line || c2[1] != '/') {
      rc = WS_EINVAL;
      break;
    }
    *c1 = *c2 = '\0';
    if (!ws__cg_digits(line, '\0')) {
      rc = WS_EINVAL;
      break;
    }
    int version = 0;
    if (strcmp(line, "0") == 0 && c1[1] == '\0')
      version = 2;
    else if (strcmp(line, "0") != 0 && ws__cg_list_has(c1 + 1, "cpu"))
      version = 1;
    if (version != 0 && f->path[version] == NULL) {
      f->path[version] = ws__strdup_quiet(c2 + 1);
      if (f->path[version] == NULL) {
        rc = WS_ENOMEM;
        break;
      }
    }
  }
  if (rc == 0 && got < 0)
    rc = got;
  else if (rc == 0 && ferror(in))
    rc = WS_ESYS;
  free(line);
  fclose(in);
  if (rc < 0)
    return rc;
  return f->path[1] != NULL || f->path[2] != NULL;
}

/* Undoes the kernel's octal escapes in a mountinfo path ("\040" for a
   space; also tab, newline and backslash) in place. False when an escape
   is broken. */
static bool ws__cg_unescape(char *s)
{
  char *out = s;
  for (const char *in = s; *in != '\0';) {
    if (*in != '\\') {
      *out++ = *in++;
      continue;
    }
    unsigned v = 0;
    for (int i = 1; i <= 3; i++) {
      if (in[i] < '0' || in[i] > '7')
        return false;
      v = v * 8 + (unsigned)(in[i] - '0');
    }
    if (v == 0 || v > 255)
      return false;
    *out++ = (char)v;
    in += 4;
  }
  *out = '\0';
  return true;
}

/* When `path` lies within a mount whose root is `mroot`, the part of path
   below mroot ("" for mroot itself); else NULL. Matches whole components
   only: root "/a" contains "/a/b" but not "/ab". */
static const char *ws__cg_below(const char *path, const char *mroot)
{
  if (strcmp(mroot, "/") == 0)
    return path;
  size_t n = strlen(mroot);
  if (strncmp(path, mroot, n) != 0 || (path[n] != '\0' && path[n] != '/'))
    return NULL;
  return path + n;
}

/* True when a path has a ".." component: the process sits outside the
   part of the hierarchy we can see (a cgroup namespace it was moved out
   of), so its files cannot be found by joining paths. */
static bool ws__cg_has_dotdot(const char *p)
{
  for (; *p != '\0'; p++)
    if (p[0] == '/' && p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))
      return true;
  return false;
}

/* Considers one mount (unescaped fields) for `version`: when the process's
   path lies below its root, and no mount with a longer root was seen,
   remembers mount point + the rest of the path. */
static int ws__cg_consider(ws__cg_find *f, int version, const char *mroot, const char *mnt)
{
  const char *path = f->path[version];
  if (path == NULL)
    return 0;
  const char *rest = ws__cg_below(path, mroot);
  if (rest == NULL || ws__cg_has_dotdot(rest))
    return 0;
  size_t rootlen = strlen(mroot);
  if (f->dir[version] != NULL && rootlen <= f->rootlen[version])
    return 0;
  size_t restlen = strlen(rest);
  while (restlen > 0 && rest[restlen - 1] == '/')
    restlen--; /* "/" and "/a/" name the same cgroups as "" and "/a" */
  size_t mlen = strlen(mnt);
  char *dir = ws__malloc_quiet(mlen + restlen + 1);
  if (dir == NULL)
    return WS_ENOMEM;
  memcpy(dir, mnt, mlen);
  memcpy(dir + mlen, rest, restlen);
  dir[mlen + restlen] = '\0';
  ws__free(f->dir[version]);
  f->dir[version] = dir;
  f->top[version] = mlen;
  f->rootlen[version] = rootlen;
  return 0;
}

/* The most fields a mountinfo line may have before we call it malformed:
   ten mandatory ones plus a handful of optional tags (shared:, master:,
   propagate_from:, unbindable). */
#define WS__MOUNT_FIELDS 32

/* /proc/self/mountinfo, one mount per line:
     id parent major:minor root mount-point options [tags...] - type source super-options
   Finds the cgroup2 mount and the cgroup (v1) mount whose super options
   hold "cpu", and joins each with the process's path. Returns 0 or an
   error (a missing file is not one: there is then nothing to locate). */
static int ws__cg_parse_mounts(const char *root, ws__cg_find *f)
{
  int rc = 0;
  FILE *in = ws__cg_open(root, "/proc/self/mountinfo", &rc);
  if (in == NULL)
    return rc;
  char *line = NULL;
  size_t cap = 0;
  int got;
  while ((got = ws__cg_line(in, &line, &cap)) > 0) {
    char *field[WS__MOUNT_FIELDS];
    int nf = 0, sep = -1;
    char *save = NULL;
    if (line[0] == '\0')
      continue;
    for (char *tok = strtok_r(line, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save)) {
      if (nf == WS__MOUNT_FIELDS) {
        rc = WS_EINVAL;
        break;
      }
      if (sep < 0 && nf >= 6 && strcmp(tok, "-") == 0)
        sep = nf;
      field[nf++] = tok;
    }
    if (rc < 0)
      break;
    /* Six fields, the separator, then type, source and super options. */
    if (sep < 0 || nf != sep + 4 || !ws__cg_digits(field[0], '\0') ||
        !ws__cg_digits(field[1], '\0') || !ws__cg_digits(field[2], ':')) {
      rc = WS_EINVAL;
      break;
    }
    const char *type = field[sep + 1];
    int version;
    if (strcmp(type, "cgroup2") == 0)
      version = 2;
    else if (strcmp(type, "cgroup") == 0 && ws__cg_list_has(field[sep + 3], "cpu"))
      version = 1;
    else
      continue;
    if (!ws__cg_unescape(field[3]) || !ws__cg_unescape(field[4]) || field[3][0] != '/' ||
        field[4][0] != '/') {
      rc = WS_EINVAL;
      break;
    }
    if ((rc = ws__cg_consider(f, version, field[3], field[4])) < 0)
      break;
  }
  if (rc == 0 && got < 0)
    rc = got;
  else if (rc == 0 && ferror(in))
    rc = WS_ESYS;
  free(line);
  fclose(in);
  return rc;
}

int ws__cgroup_cpu_limit(const char *root, double *cpus)
{
  ws__cg_find f;
  memset(&f, 0, sizeof f);
  if (root == NULL)
    root = "";
  int rc = ws__cg_parse_self(root, &f);
  if (rc > 0)
    rc = ws__cg_parse_mounts(root, &f);
  if (rc == 0) {
    /* v1 first: when a v1 hierarchy carries the cpu controller, the v2 one
       cannot (a controller is bound to one hierarchy at a time). */
    int version = f.dir[1] != NULL ? 1 : f.dir[2] != NULL ? 2 : 0;
    if (version != 0)
      rc = ws__cg_walk(root, version, f.dir[version], f.top[version], cpus);
  }
  for (int v = 1; v <= 2; v++) {
    ws__free(f.path[v]);
    ws__free(f.dir[v]);
  }
  return rc;
}
