// lafuzz standalone runtime, the comparison functions: memcmp, strcmp and kin, replaced so that
// comparison logging sees their operands. The wrapper keeps calls to them as calls
// (-fno-builtin-...) so they reach these; simple and exact, and only this binary uses them.
#include <stdint.h>
#include <string.h>

#include "lafuzz_runtime.h"

int memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  size_t i = 0;
  while (i < n && x[i] == y[i]) i++;
  int r = i == n ? 0 : (int)x[i] - (int)y[i];
  // Only a mismatch is worth logging: an equal comparison leaves the fuzzer nothing to solve.
  if (lafuzz_cmplog && r) lafuzz_cmplog_rtn(RETADDR, a, b, n);
  return r;
}
int bcmp(const void *a, const void *b, size_t n) { return memcmp(a, b, n); }
static int str_n_cmp(const char *a, const char *b, size_t n, int fold, uintptr_t pc) {
  size_t i = 0;
  int r = 0;
  for (; i < n; i++) {
    unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
    if (fold) {
      if (x >= 'A' && x <= 'Z') x += 32;
      if (y >= 'A' && y <= 'Z') y += 32;
    }
    if (x != y || !x) {
      r = (int)x - (int)y;
      break;
    }
  }
  if (lafuzz_cmplog && r) {
    // Log the strings up to their terminator (both sides padded with zeros), never past n or
    // the log's width: reading further could run off the end of either string.
    size_t la = strnlen(a, CMPLOG_RTN_LEN), lb = strnlen(b, CMPLOG_RTN_LEN);
    size_t len = (la > lb ? la : lb) + 1;
    if (len > n) len = n;
    if (len > CMPLOG_RTN_LEN) len = CMPLOG_RTN_LEN;
    char pa[CMPLOG_RTN_LEN] = {0}, pb[CMPLOG_RTN_LEN] = {0};
    memcpy(pa, a, la < len ? la : len);
    memcpy(pb, b, lb < len ? lb : len);
    lafuzz_cmplog_rtn(pc, pa, pb, len);
  }
  return r;
}
int strcmp(const char *a, const char *b) { return str_n_cmp(a, b, (size_t)-1, 0, RETADDR); }
int strncmp(const char *a, const char *b, size_t n) { return str_n_cmp(a, b, n, 0, RETADDR); }
int strcasecmp(const char *a, const char *b) { return str_n_cmp(a, b, (size_t)-1, 1, RETADDR); }
int strncasecmp(const char *a, const char *b, size_t n) { return str_n_cmp(a, b, n, 1, RETADDR); }
