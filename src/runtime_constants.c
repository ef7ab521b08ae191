// The standalone runtime's constants, exported for the fuzzer's Rust side (src/runtime_abi.rs):
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
