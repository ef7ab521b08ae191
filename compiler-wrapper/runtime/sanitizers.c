// lafuzz standalone runtime, the sanitizers' defaults: make their findings crash, so the fuzzer
// sees them (the option strings and why are in lafuzz_runtime.h). Strong definitions: the
// sanitizer runtimes' own weak defaults would otherwise win. ASAN_OPTIONS and UBSAN_OPTIONS in
// the environment still take precedence.
#include "lafuzz_runtime.h"

const char *__asan_default_options(void) { return LAFUZZ_ASAN_OPTIONS; }

const char *__ubsan_default_options(void) { return LAFUZZ_UBSAN_OPTIONS; }
