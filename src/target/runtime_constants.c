// The standalone runtime's constants, exported for the fuzzer's Rust side (src/target/runtime_abi.rs):
// compiled from the runtime's own header, so the two sides cannot drift apart.
#include <stddef.h>

#include "lafuzz_runtime.h"

// UBSAN_OPTIONS for targets that do not build the defaults in (AFL++ builds).
const char lafuzz_ubsan_options[] = LAFUZZ_UBSAN_OPTIONS;
// What the coverage segment is rounded up to (the counters' pages).
const size_t lafuzz_page_size = LAFUZZ_PAGE_SIZE;
// What LibAFL rounds a target's reported map size up to.
const size_t lafuzz_map_alignment = LAFUZZ_MAP_ALIGN;
// The comparison log's size as the runtime lays it out (cmplog.c exports the same value as
// __lafuzz_cmplog_map_size): the fuzzer's segment must hold it.
const size_t lafuzz_cmplog_map_size = sizeof(cmplog_map);
// The environment through which the fuzzer hands a standalone target's children their memory
// limit and the flag they raise when they go over it (memory.c).
const char lafuzz_rss_limit_env[] = LAFUZZ_RSS_LIMIT_ENV_VAR;
const char lafuzz_oom_shm_env[] = LAFUZZ_OOM_SHM_ENV_VAR;
// The environment through which the fuzzer tells a persistent child its timeout signal.
const char lafuzz_timeout_signal_env[] = LAFUZZ_TIMEOUT_SIGNAL_ENV_VAR;
// The environment variable that gives the tracing fork server its comparison log.
const char lafuzz_cmplog_shm_env[] = LAFUZZ_CMPLOG_SHM_ENV_VAR;
// The environment variable that makes a target run alone print its stack on a crash (stack.c).
const char lafuzz_print_stack_env[] = LAFUZZ_PRINT_STACK_ENV_VAR;
