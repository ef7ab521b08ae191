// Optional harness hooks, looked up as weak symbols.
//
// LLVMFuzzerReset: `reset` mode calls it after every input, so the harness can clear the global
// state (caches, counters) that one input would otherwise leave for the next.
__attribute__((weak)) void LLVMFuzzerReset(void);

int lafuzz_has_reset_hook(void) { return LLVMFuzzerReset != 0; }

void lafuzz_call_reset_hook(void) {
  if (LLVMFuzzerReset) LLVMFuzzerReset();
}

// The flag the cmp-guard pass (compiler-wrapper/pass) tests before each comparison hook: set
// for tracing runs, and for every run with value profile on (see comparison_hooks.rs).
#include <stdint.h>
uint8_t lafuzz_comparison_hooks_on;

// The in-process switch hook: the cmp-guard pass (compiler-wrapper/pass) calls this instead of
// SanitizerCoverage's __sanitizer_cov_trace_switch (libafl_targets' logs every case on every
// call), into libafl_targets' comparison log while a tracing run is on. See cmplog_switch.
#include "cmplog_log.h"

extern cmplog_map *libafl_cmplog_map_ptr;
extern uint8_t libafl_cmplog_enabled;

void lafuzz_trace_switch(uint64_t val, uint64_t *cases) {
  if (libafl_cmplog_enabled) cmplog_switch(libafl_cmplog_map_ptr, RETADDR, val, cases);
}
