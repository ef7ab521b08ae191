// Optional harness hooks, looked up as weak symbols.
//
// LLVMFuzzerReset: `reset` mode calls it after every input, so the harness can clear the global
// state (caches, counters) that one input would otherwise leave for the next.
__attribute__((weak)) void LLVMFuzzerReset(void);

int lafuzz_has_reset_hook(void) { return LLVMFuzzerReset != 0; }

void lafuzz_call_reset_hook(void) {
  if (LLVMFuzzerReset) LLVMFuzzerReset();
}

// The malloc limit (`--malloc-limit-mb`), with a sanitizer allocator (ASan): its malloc hook
// sees every allocation of the target, and one larger than the limit ends the process with
// LAFUZZ_MALLOC_LIMIT_EXIT, which the fuzzer reads as out-of-memory. Without a sanitizer
// allocator the hooks are never called, and only the RSS limit applies.
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#define LAFUZZ_MALLOC_LIMIT_EXIT 109

typedef void (*lafuzz_malloc_hook)(const volatile void *, size_t);
typedef void (*lafuzz_free_hook)(const volatile void *);
__attribute__((weak)) int __sanitizer_install_malloc_and_free_hooks(lafuzz_malloc_hook,
                                                                     lafuzz_free_hook);

static size_t malloc_limit;

static void on_malloc(const volatile void *ptr, size_t size) {
  (void)ptr;
  if (malloc_limit && size > malloc_limit) {
    fprintf(stderr, "==%d== ERROR: lafuzz: out-of-memory (malloc(%zu))\n", (int)getpid(), size);
    _exit(LAFUZZ_MALLOC_LIMIT_EXIT);
  }
}

// The sanitizers take a malloc hook only together with a free hook.
static void on_free(const volatile void *ptr) { (void)ptr; }

int lafuzz_malloc_limit_exit(void) { return LAFUZZ_MALLOC_LIMIT_EXIT; }

// Returns 1 when the limit is in force (a sanitizer allocator is linked), else 0.
int lafuzz_set_malloc_limit(size_t bytes) {
  if (!__sanitizer_install_malloc_and_free_hooks) return 0;
  malloc_limit = bytes;
  return __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free) != 0;
}

// The in-process switch hook: the cmp-guard pass (compiler-wrapper/pass) calls this instead of
// SanitizerCoverage's __sanitizer_cov_trace_switch (libafl_targets' logs every case on every
// call), into libafl_targets' comparison log while a tracing run is on. See cmplog_switch.
#include "cmplog_log.h"

extern cmplog_map *libafl_cmplog_map_ptr;
extern uint8_t libafl_cmplog_enabled;

void lafuzz_trace_switch(uint64_t val, uint64_t *cases) {
  if (libafl_cmplog_enabled) cmplog_switch(libafl_cmplog_map_ptr, RETADDR, val, cases);
}
