// lafuzz standalone runtime, comparison logging: the log the fuzzer's tracing runs read, and the
// SanitizerCoverage trace-cmp hooks that fill it. Active only in the process the fuzzer starts
// with __LAFUZZ_CMPLOG_SHM_ID, which maps the log there; otherwise each hook is one null check.
// The layout is LibAFL's CmpLogMap (lafuzz_runtime.h), so LibAFL's CmpLogObserver reads it.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>

#include "cmplog_log.h"

cmplog_map *lafuzz_cmplog;

// The flag that the cmp-guard pass (compiler-wrapper/pass) tests before each hook call: 1 once
// the log is mapped. Objects from before the flag's rename test libafl_cmplog_enabled.
uint8_t lafuzz_comparison_hooks_on;
uint8_t libafl_cmplog_enabled;

// The log's size as this runtime lays it out, for a fuzzer or a test to check against its own.
const size_t __lafuzz_cmplog_map_size = sizeof(cmplog_map);

int lafuzz_cmplog_attach(void) {
  const char *id = getenv(LAFUZZ_CMPLOG_SHM_ENV_VAR);
  if (!id) return 0;
  void *seg = shmat(atoi(id), NULL, 0);
  if (seg == (void *)-1) return -1;
  lafuzz_cmplog = seg;
  lafuzz_comparison_hooks_on = 1;
  libafl_cmplog_enabled = 1;
  return 0;
}

void lafuzz_cmplog_rtn(uintptr_t pc, const void *a, const void *b, size_t n) {
  if (n > CMPLOG_RTN_LEN) n = CMPLOG_RTN_LEN;
  if (n == 0) return;
  uintptr_t k = cmplog_key(pc);
  uint16_t hit =
      cmplog_hit(lafuzz_cmplog, k, CMPLOG_KIND_RTN, (uint8_t)(n - 1)) & (CMPLOG_RTN_H - 1);
  cmplog_routine *r = &lafuzz_cmplog->vals.routines[k][hit];
  memset(r, 0, sizeof *r);
  memcpy(r->v0, a, n);
  memcpy(r->v1, b, n);
}

#define TRACE_CMP(bits, type, is_const)                                                     \
  void __sanitizer_cov_trace_##is_const##cmp##bits(type a, type b);                        \
  void __sanitizer_cov_trace_##is_const##cmp##bits(type a, type b) {                       \
    if (lafuzz_cmplog)                                                                      \
      cmplog_ins(lafuzz_cmplog, RETADDR, sizeof(type), a, b, sizeof(#is_const) > 1);        \
  }
TRACE_CMP(1, uint8_t, )
TRACE_CMP(2, uint16_t, )
TRACE_CMP(4, uint32_t, )
TRACE_CMP(8, uint64_t, )
TRACE_CMP(1, uint8_t, const_)
TRACE_CMP(2, uint16_t, const_)
TRACE_CMP(4, uint32_t, const_)
TRACE_CMP(8, uint64_t, const_)

// The cmp-guard pass calls this for SanitizerCoverage's switch hook (see cmplog_switch).
void lafuzz_trace_switch(uint64_t val, uint64_t *cases) {
  if (lafuzz_cmplog) cmplog_switch(lafuzz_cmplog, RETADDR, val, cases);
}

// SanitizerCoverage's own name, for objects instrumented without the pass.
void __sanitizer_cov_trace_switch(uint64_t val, uint64_t *cases) {
  if (lafuzz_cmplog) cmplog_switch(lafuzz_cmplog, RETADDR, val, cases);
}
