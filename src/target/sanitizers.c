// The sanitizers of an in-process build (-fsanitize=address, leak, undefined), as libFuzzer
// drives them: their default options, and through the sanitizer allocator's malloc and free
// hooks the malloc limit and the leak check. Without a sanitizer allocator the hooks are never
// called: only the RSS limit applies and leaks are not looked for.
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

// ASan: abort() on a report, so the fuzzer sees a crash signal (the fuzzer's own signal
// handlers, not ASan's, take the signals); allocations too large to serve fail with NULL. Leak
// detection on (libFuzzer's default with ASan), but no check at exit: the fuzzer checks after an
// input that allocated more than it freed, and the engine's own memory at exit is none of the
// target's business. Allocation stacks are kept (libFuzzer's default) for the leak reports. The
// standalone runtime's differ (see its header): its child ends the fork server's way.
// ASAN_OPTIONS, LSAN_OPTIONS and UBSAN_OPTIONS in the environment take precedence.
// Reports are symbolized by the llvm-symbolizer of the LLVM that built the runtime (the build
// script finds it), when it is still there: PATH may have none (Debian's llvm-19 installs it
// only as llvm-symbolizer-19) or an older one.
#ifdef LAFUZZ_SYMBOLIZER
#define WITH_SYMBOLIZER(options) \
  (access(LAFUZZ_SYMBOLIZER, X_OK) == 0 ? options ":external_symbolizer_path=" LAFUZZ_SYMBOLIZER \
                                        : options)
#else
#define WITH_SYMBOLIZER(options) options
#endif

const char *__asan_default_options(void) {
  return WITH_SYMBOLIZER(
      "abort_on_error=1:allocator_may_return_null=1:detect_leaks=1:leak_check_at_exit=0:"
      "detect_odr_violation=0:handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:"
      "handle_sigill=0");
}
const char *__lsan_default_options(void) { return WITH_SYMBOLIZER("leak_check_at_exit=0"); }
// UBSan: as the standalone runtime's (LAFUZZ_UBSAN_OPTIONS), but symbolized: its options are
// every sanitizer's common flags, and a finding here is reported once, in words.
const char *__ubsan_default_options(void) {
  return WITH_SYMBOLIZER(
      "halt_on_error=1:abort_on_error=1:handle_segv=0:handle_sigbus=0:handle_abort=0:"
      "handle_sigfpe=0:handle_sigill=0");
}

#define LAFUZZ_MALLOC_LIMIT_EXIT 109

typedef void (*lafuzz_malloc_hook)(const volatile void *, size_t);
typedef void (*lafuzz_free_hook)(const volatile void *);
__attribute__((weak)) int __sanitizer_install_malloc_and_free_hooks(lafuzz_malloc_hook,
                                                                     lafuzz_free_hook);
__attribute__((weak)) void __lsan_enable(void);
__attribute__((weak)) void __lsan_disable(void);
__attribute__((weak)) int __lsan_do_recoverable_leak_check(void);

static size_t malloc_limit;
// Set by the in-process modes (modes/watchdog): ends the running input as a finding, when one
// runs; returns when none does, and the process then exits as before.
static void (*end_input_over_limit)(void);
// While an input runs with leak detection on: its mallocs and frees (every thread's, as
// libFuzzer counts them).
static atomic_int counting;
static atomic_size_t mallocs, frees;

static void on_malloc(const volatile void *ptr, size_t size) {
  (void)ptr;
  if (malloc_limit && size > malloc_limit) {
    fprintf(stderr, "==%d== ERROR: lafuzz: out-of-memory (malloc(%zu))\n", (int)getpid(), size);
    if (end_input_over_limit) end_input_over_limit();
    _exit(LAFUZZ_MALLOC_LIMIT_EXIT);
  }
  if (atomic_load_explicit(&counting, memory_order_relaxed))
    atomic_fetch_add_explicit(&mallocs, 1, memory_order_relaxed);
}

static void on_free(const volatile void *ptr) {
  if (ptr && atomic_load_explicit(&counting, memory_order_relaxed))
    atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
}

// Installs the hooks once; 1 when a sanitizer allocator calls them.
static int hooks_installed(void) {
  static int installed = -1;
  if (installed < 0)
    installed = __sanitizer_install_malloc_and_free_hooks &&
                __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free) != 0;
  return installed;
}

int lafuzz_malloc_limit_exit(void) { return LAFUZZ_MALLOC_LIMIT_EXIT; }

void lafuzz_end_inputs_over_malloc_limit(void (*ender)(void)) { end_input_over_limit = ender; }

// Returns 1 when the limit is in force (a sanitizer allocator is linked), else 0.
int lafuzz_set_malloc_limit(size_t bytes) {
  malloc_limit = bytes;
  return hooks_installed();
}

// 1 when leaks can be looked for: LeakSanitizer (alone or in ASan) and the allocator's hooks.
int lafuzz_leak_detection_available(void) {
  return __lsan_enable && __lsan_disable && __lsan_do_recoverable_leak_check && hooks_installed();
}

// Starts (1) or stops (0) counting the mallocs and frees of the input that runs.
void lafuzz_count_mallocs(int on) {
  if (on) {
    atomic_store(&mallocs, 0);
    atomic_store(&frees, 0);
  }
  atomic_store(&counting, on);
}

// Whether the input counted last allocated more than it freed.
int lafuzz_more_mallocs_than_frees(void) { return atomic_load(&mallocs) > atomic_load(&frees); }

// LeakSanitizer ignores (0) or tracks again (1) what is allocated from now on.
void lafuzz_lsan_track(int on) {
  if (on)
    __lsan_enable();
  else
    __lsan_disable();
}

// LeakSanitizer's check now: prints its report and returns 1 when something leaked.
int lafuzz_leak_check(void) { return __lsan_do_recoverable_leak_check(); }

// libFuzzer's -close_fd_mask: the target's stdout (1) and stderr (2) go to /dev/null, but the
// sanitizers' reports still reach the stderr this process was given, as libFuzzer keeps them.
// 0, or -1.
__attribute__((weak)) void __sanitizer_set_report_fd(void *fd);
int lafuzz_silence_output(int stdout_too, int stderr_too) {
  int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null < 0) return -1;
  int failed = stdout_too && dup2(null, 1) < 0;
  if (stderr_too) {
    int kept = dup(2);
    if (kept < 0) failed = 1;
    else if (__sanitizer_set_report_fd) __sanitizer_set_report_fd((void *)(intptr_t)kept);
    failed |= dup2(null, 2) < 0;
  }
  close(null);
  return failed ? -1 : 0;
}

// For the stack printer of crashing children (stack.rs): a return address symbolized by a
// sanitizer's symbolizer into `out` ("in FUNCTION FILE:LINE:COL", one NUL-terminated string per
// inlined frame, then an empty one), 1; or 0 without a sanitizer. And whether ASan already
// reported (its report has the stack that matters).
__attribute__((weak)) void __sanitizer_symbolize_pc(void *pc, const char *fmt, char *out,
                                                    size_t size);
__attribute__((weak)) int __asan_report_present(void);
int lafuzz_sanitizer_symbolize(void *pc, char *out, size_t size) {
  if (!__sanitizer_symbolize_pc) return 0;
  __sanitizer_symbolize_pc(pc, "%F %L", out, size);
  return 1;
}
int lafuzz_sanitizer_reported(void) { return __asan_report_present && __asan_report_present(); }

// Whether the sanitizer's symbolizer answers in step: asks it (and so starts it, in a process
// that has none) for this function's name, 1 when the answer names it. Asking also reads an
// answer left unread by a process that was killed while it asked (see stack.rs).
int lafuzz_sanitizer_symbolizer_in_step(void) {
  char name[64] = "";
  if (!__sanitizer_symbolize_pc) return 0;
  // It is given return addresses, which it moves back into the call: one byte in.
  __sanitizer_symbolize_pc((char *)&lafuzz_sanitizer_symbolizer_in_step + 1, "%f", name,
                           sizeof name);
  return strcmp(name, "lafuzz_sanitizer_symbolizer_in_step") == 0;
}

// Whether AddressSanitizer is linked in (harness.rs gives the target exact-size inputs then).
int lafuzz_asan_linked(void) { return __asan_report_present != 0; }

// The llvm-symbolizer found when this was built (see WITH_SYMBOLIZER), or NULL: the fuzzer
// symbolizes a standalone target's unsymbolized stack with it (triage/symbolize.rs).
const char *lafuzz_symbolizer_path(void) {
#ifdef LAFUZZ_SYMBOLIZER
  return access(LAFUZZ_SYMBOLIZER, X_OK) == 0 ? LAFUZZ_SYMBOLIZER : NULL;
#else
  return NULL;
#endif
}
