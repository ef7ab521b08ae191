// lafuzz standalone runtime, the comparison functions: memcmp, strcmp and kin, replaced so that
// comparison logging sees their operands. The wrapper keeps calls to them as calls
// (-fno-builtin-...) so they reach these. Each compares with the C library's own function
// (found past this binary's definition at start-up; its SIMD versions, where a byte loop made
// the fork server's executions of memcmp-heavy targets slower than AFL++'s), and logs a
// mismatch only in a tracing run.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "lafuzz_runtime.h"

typedef int (*memcmp_fn)(const void *, const void *, size_t);
typedef int (*strncmp_fn)(const char *, const char *, size_t);
typedef int (*strcmp_fn)(const char *, const char *);

static memcmp_fn libc_memcmp;
static strcmp_fn libc_strcmp, libc_strcasecmp;
static strncmp_fn libc_strncmp, libc_strncasecmp;

// Before the lookup (another constructor comparing), or where it failed: byte loops.
static int bytes_cmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  size_t i = 0;
  while (i < n && x[i] == y[i]) i++;
  return i == n ? 0 : (int)x[i] - (int)y[i];
}

static int str_n_cmp_bytes(const char *a, const char *b, size_t n, int fold) {
  for (size_t i = 0; i < n; i++) {
    unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
    if (fold) {
      if (x >= 'A' && x <= 'Z') x += 32;
      if (y >= 'A' && y <= 'Z') y += 32;
    }
    if (x != y || !x) return (int)x - (int)y;
  }
  return 0;
}

__attribute__((constructor(101))) static void find_libc_comparisons(void) {
  libc_memcmp = (memcmp_fn)dlsym(RTLD_NEXT, "memcmp");
  libc_strcmp = (strcmp_fn)dlsym(RTLD_NEXT, "strcmp");
  libc_strncmp = (strncmp_fn)dlsym(RTLD_NEXT, "strncmp");
  libc_strcasecmp = (strcmp_fn)dlsym(RTLD_NEXT, "strcasecmp");
  libc_strncasecmp = (strncmp_fn)dlsym(RTLD_NEXT, "strncasecmp");
}

int memcmp(const void *a, const void *b, size_t n) {
  int r = libc_memcmp ? libc_memcmp(a, b, n) : bytes_cmp(a, b, n);
  // Only a mismatch is worth logging: an equal comparison leaves the fuzzer nothing to solve.
  if (lafuzz_cmplog && r) lafuzz_cmplog_rtn(RETADDR, a, b, n);
  return r;
}
int bcmp(const void *a, const void *b, size_t n) { return memcmp(a, b, n); }

// Returns r, the result of comparing the strings a and b (at most n bytes); a mismatch is logged
// up to the strings' terminator (both sides padded with zeros), never past n or the log's
// width: reading further could run off the end of either string.
static int logged_strings(int r, const char *a, const char *b, size_t n, uintptr_t pc) {
  if (!lafuzz_cmplog || !r) return r;
  size_t la = strnlen(a, CMPLOG_RTN_LEN), lb = strnlen(b, CMPLOG_RTN_LEN);
  size_t len = (la > lb ? la : lb) + 1;
  if (len > n) len = n;
  if (len > CMPLOG_RTN_LEN) len = CMPLOG_RTN_LEN;
  char pa[CMPLOG_RTN_LEN] = {0}, pb[CMPLOG_RTN_LEN] = {0};
  memcpy(pa, a, la < len ? la : len);
  memcpy(pb, b, lb < len ? lb : len);
  lafuzz_cmplog_rtn(pc, pa, pb, len);
  return r;
}

int strcmp(const char *a, const char *b) {
  int r = libc_strcmp ? libc_strcmp(a, b) : str_n_cmp_bytes(a, b, SIZE_MAX, 0);
  return logged_strings(r, a, b, SIZE_MAX, RETADDR);
}
int strncmp(const char *a, const char *b, size_t n) {
  int r = libc_strncmp ? libc_strncmp(a, b, n) : str_n_cmp_bytes(a, b, n, 0);
  return logged_strings(r, a, b, n, RETADDR);
}
int strcasecmp(const char *a, const char *b) {
  int r = libc_strcasecmp ? libc_strcasecmp(a, b) : str_n_cmp_bytes(a, b, SIZE_MAX, 1);
  return logged_strings(r, a, b, SIZE_MAX, RETADDR);
}
int strncasecmp(const char *a, const char *b, size_t n) {
  int r = libc_strncasecmp ? libc_strncasecmp(a, b, n) : str_n_cmp_bytes(a, b, n, 1);
  return logged_strings(r, a, b, n, RETADDR);
}
