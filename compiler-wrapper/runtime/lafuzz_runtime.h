// lafuzz_runtime.h: what the fuzzer and the standalone runtime must agree on, in one place (as
// AFL++'s include/forkserver.h and include/cmplog.h are for afl-fuzz and its compiler runtime):
// the fork server protocol's constants, the comparison log's layout and the sanitizer options.
// The runtime's files include it, and so does the fuzzer crate's src/target/runtime_constants.c, which
// exports these values to Rust (src/target/runtime_abi.rs): a change made here reaches both sides.
// Only macros, types and declarations: including it defines no symbol.
#ifndef LAFUZZ_RUNTIME_H
#define LAFUZZ_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

// ---- AFL++'s fork server protocol (AFL++'s include/config.h and include/types.h) ----

// The fuzzer writes to us on FORKSRV_FD and reads our replies on FORKSRV_FD + 1.
#define FORKSRV_FD 198
// The "new" handshake, version 1 ("AFL\0" + 1): what LibAFL's ForkserverExecutor and afl-fuzz
// expect as our first message; the fuzzer answers with its complement.
#define FS_VERSION (0x41464c00u + 1u)
// Options announced after the handshake.
#define FS_OPT_MAPSIZE 0x1u      // the coverage map's size follows
#define FS_OPT_SHDMEM_FUZZ 0x2u  // testcases come in SHM_FUZZ_ENV_VAR's segment
#define FS_OPT_AUTODICT 0x800u   // a dictionary follows (libafl_cc's autotokens)

// The environment a fuzzer gives its target.
#define SHM_ENV_VAR "__AFL_SHM_ID"            // the coverage map's segment
#define SHM_FUZZ_ENV_VAR "__AFL_SHM_FUZZ_ID"  // testcases: a 4-byte length, then the bytes
#define PERSIST_ENV_VAR "__AFL_PERSISTENT"    // "1": many inputs per child
#define DUMP_MAP_SIZE_ENV_VAR "AFL_DUMP_MAP_SIZE"  // print the map size and exit
// Ours: the comparison log's segment. The fuzzer also looks for this name in a target binary
// to tell our builds (which can log comparisons) from AFL++'s (src/modes/standalone/probe.rs).
#define LAFUZZ_CMPLOG_SHM_ENV_VAR "__LAFUZZ_CMPLOG_SHM_ID"
// The memory limit of a fuzzed child, in MiB (memory.c), and the one-byte flag in shared memory
// that the child raises before it kills itself for going over it.
#define LAFUZZ_RSS_LIMIT_ENV_VAR "__LAFUZZ_RSS_LIMIT_MB"
#define LAFUZZ_OOM_SHM_ENV_VAR "__LAFUZZ_OOM_SHM_ID"
// Ours: the signal (a number) the fuzzer stops a timed-out persistent child with. One it can
// catch, unlike SIGKILL: told it, a persistent child answers the fuzzer itself between inputs
// (answers.c); afl-fuzz does not tell it, and gets AFL++'s stop-and-continue loop.
#define LAFUZZ_TIMEOUT_SIGNAL_ENV_VAR "__LAFUZZ_TIMEOUT_SIGNAL"
// Ours: set by the fuzzer when it runs a finding again to describe it (stack.c): a fatal
// signal prints the stack first.
#define LAFUZZ_PRINT_STACK_ENV_VAR "__LAFUZZ_PRINT_STACK"

// The page the coverage counters are aligned to and padded to (libafl_cc's linker script, whose
// build reads this value), and that the fuzzer rounds its coverage segment up to: the runtime maps the
// segment over the counters' pages, so both ends must deal in whole pages.
#define LAFUZZ_PAGE_SIZE 4096
// LibAFL's ForkserverExecutor (as afl-fuzz) rounds the map size a target reports up to a
// multiple of this many entries and refuses a map smaller than that: the fuzzer sizes its map
// the same way. The runtime reports the exact size.
#define LAFUZZ_MAP_ALIGN 64

// ---- The comparison log, in LibAFL's CmpLogMap layout (libafl_targets' cmplog.h) ----
// The fuzzer reads it with LibAFL's CmpLogObserver, so the layout must be LibAFL's to the byte
// (src/target/runtime_abi.rs tests the size against libafl_targets::cmps::CmpLogMap).

#define CMPLOG_W 65536    // entries, one per comparison site (hash of its address)
#define CMPLOG_H 32       // logged executions per site (a ring: hits wrap around)
#define CMPLOG_RTN_LEN 32 // bytes kept of each operand of a memcmp/strcmp-style call
#define CMPLOG_KIND_INS 0 // an integer comparison (trace-cmp, switch)
#define CMPLOG_KIND_RTN 1 // a call to a comparison function
typedef struct {
  uint16_t hits;
  uint8_t shape;  // operand size - 1
  uint8_t kind;
} cmplog_header;
typedef struct {
  uint64_t v0, v1;
  uint8_t v0_is_const;
} cmplog_operands;
typedef struct {
  uint8_t v0[CMPLOG_RTN_LEN], v1[CMPLOG_RTN_LEN];
} cmplog_routine;
// A site's row holds either operands or routines: as many routines as fit in its operands.
#define CMPLOG_RTN_H ((CMPLOG_H * sizeof(cmplog_operands)) / sizeof(cmplog_routine))
typedef struct {
  cmplog_header headers[CMPLOG_W];
  union {
    cmplog_operands operands[CMPLOG_W][CMPLOG_H];
    cmplog_routine routines[CMPLOG_W][CMPLOG_RTN_H];
  } vals;
} cmplog_map;

// ---- Sanitizer options: findings must end in a crash signal the fuzzer can see ----

// ASan: abort() on a report, so the fuzzer sees a crash signal; no symbolizing (slow), no leak
// check at exit, and allocations too large to serve fail with NULL rather than as a report.
#define LAFUZZ_ASAN_OPTIONS \
  "abort_on_error=1:symbolize=0:detect_leaks=0:allocator_may_return_null=1"
// UBSan's standalone runtime comes with every -fsanitize-coverage build (clang links it for the
// coverage callbacks) and catches SIGSEGV and friends to print a report and exit(1): the fuzzer
// would see a clean exit, late (the report is symbolized), instead of a crash. Let the signals
// kill the process, and make UBSan's own checks (-fsanitize=undefined) abort. The standalone
// runtime builds this in (__ubsan_default_options); the fuzzer sets it as UBSAN_OPTIONS for
// targets without it (AFL++ builds), unless the user set their own.
#define LAFUZZ_UBSAN_OPTIONS                                                             \
  "halt_on_error=1:abort_on_error=1:symbolize=0:handle_segv=0:handle_sigbus=0:"          \
  "handle_abort=0:handle_sigfpe=0:handle_sigill=0"

// ---- Shared between the standalone runtime's files, and nothing else ----
// Hidden: a target links the runtime whole, and sanitizer builds export their symbols
// dynamically; these are not part of what a target offers.
#define LAFUZZ_HIDDEN __attribute__((visibility("hidden")))

// The address a hook was called from: it tells one comparison site from another.
#define RETADDR ((uintptr_t)__builtin_return_address(0))

// The comparison log, or NULL when this process logs none (cmplog.c).
LAFUZZ_HIDDEN extern cmplog_map *lafuzz_cmplog;
// Maps the log when the fuzzer offers one (LAFUZZ_CMPLOG_SHM_ENV_VAR): 0, or -1 with errno.
LAFUZZ_HIDDEN int lafuzz_cmplog_attach(void);
// In the fork server: reads the memory limit the fuzzer set, if any (memory.c).
LAFUZZ_HIDDEN void lafuzz_memory_limit_setup(void);
// In a fuzzed child: starts watching its memory, when there is a limit (memory.c).
LAFUZZ_HIDDEN void lafuzz_watch_memory(void);
// The fork server protocol's words (protocol.c): 0, or -1 when the fuzzer is gone.
LAFUZZ_HIDDEN int lafuzz_read_u32(uint32_t *v);
LAFUZZ_HIDDEN int lafuzz_write_u32(uint32_t v);
// A persistent child that answers the fuzzer itself (answers.c). In the fork server: set it up
// when the fuzzer names the timeout signal (1: children answer directly), and say when the
// newest child's pid is reported (0 before the fork, 1 once written).
LAFUZZ_HIDDEN int lafuzz_setup_direct_answers(void);
LAFUZZ_HIDDEN void lafuzz_pid_reported(int reported);
// In such a child, between two inputs: this input's end, then the next go.
LAFUZZ_HIDDEN void lafuzz_answer_and_take_the_go(pid_t own_pid);
// True while a persistent child answers the fuzzer itself: not a time to end.
LAFUZZ_HIDDEN int lafuzz_answering(void);
// Logs a comparison of n bytes at a and b made at pc (lafuzz_cmplog must be set).
LAFUZZ_HIDDEN void lafuzz_cmplog_rtn(uintptr_t pc, const void *a, const void *b, size_t n);

#endif
