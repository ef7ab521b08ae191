// lafuzz standalone runtime: linked by `libafl_cc --standalone` instead of the in-process
// fuzzer. It makes an ordinary executable that
//   - run by hand (`./target FILE...`, or stdin), runs each input once: how users reproduce;
//   - run by a fuzzer, speaks AFL++'s fork server protocol (version 1 of the "new" model, as
//     LibAFL's ForkserverExecutor and afl-fuzz expect) on fds 198/199, with the coverage map
//     in `__AFL_SHM_ID`, the testcase in `__AFL_SHM_FUZZ_ID` shared memory when offered, and
//     persistent mode (`__AFL_PERSISTENT`, the child stops itself with SIGSTOP per input).
// The coverage map IS the target's inline 8-bit counters: the fuzzer's segment is mapped over
// the counters' pages (which libafl_cc's linker script keeps to themselves), so what a
// crashing or hanging input covered is in the map too.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#define FORKSRV_FD 198
#define FS_VERSION (0x41464c00u + 1u)
#define FS_OPT_MAPSIZE 0x1u
#define FS_OPT_SHDMEM_FUZZ 0x2u
#define FS_OPT_AUTODICT 0x800u
#define MAX_FILE_INPUT (1u << 20)
#define PERSISTENT_DEFAULT 10000

// Weak: a program with its own main (AFL++ style) has no LLVMFuzzerTestOneInput.
__attribute__((weak)) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

// AFL++'s names, so harnesses written for afl-clang-fast work unchanged.
int __afl_sharedmem_fuzzing __attribute__((weak)) = 0;
static uint32_t afl_fuzz_len_local;
unsigned char *__afl_fuzz_ptr;
uint32_t *__afl_fuzz_len = &afl_fuzz_len_local;

static uint8_t *counters_start, *counters_stop;
static int forkserver_running, in_child, persistent;
static unsigned char *shm_input;  // 4-byte length, then the bytes

// libafl_cc's autotokens pass puts string constants here.
extern uint8_t __start_libafl_token[] __attribute__((weak));
extern uint8_t __stop_libafl_token[] __attribute__((weak));

void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop) {
  if (!counters_start || start < counters_start) counters_start = start;
  if (stop > counters_stop) counters_stop = stop;
}

// Comparison logging for the fuzzer's tracing runs, in LibAFL's CmpLogMap layout
// (libafl_targets' cmplog.h): active only in the process the fuzzer starts with
// __LAFUZZ_CMPLOG_SHM_ID, which maps the log there; otherwise each hook is one null check.
#define CMPLOG_W 65536
#define CMPLOG_H 32
#define CMPLOG_RTN_LEN 32
#define CMPLOG_KIND_INS 0
#define CMPLOG_KIND_RTN 1
typedef struct {
  uint16_t hits;
  uint8_t shape;
  uint8_t kind;
} cmplog_header;
typedef struct {
  uint64_t v0, v1;
  uint8_t v0_is_const;
} cmplog_operands;
typedef struct {
  uint8_t v0[CMPLOG_RTN_LEN], v1[CMPLOG_RTN_LEN];
} cmplog_routine;
#define CMPLOG_RTN_H ((CMPLOG_H * sizeof(cmplog_operands)) / sizeof(cmplog_routine))
typedef struct {
  cmplog_header headers[CMPLOG_W];
  union {
    cmplog_operands operands[CMPLOG_W][CMPLOG_H];
    cmplog_routine routines[CMPLOG_W][CMPLOG_RTN_H];
  } vals;
} cmplog_map;
static cmplog_map *cmplog;

static uintptr_t cmplog_key(uintptr_t pc) { return ((pc >> 4) ^ (pc << 8)) & (CMPLOG_W - 1); }

static uint16_t cmplog_hit(uintptr_t k, uint8_t kind, uint8_t shape) {
  cmplog_header *h = &cmplog->headers[k];
  if (h->kind != kind || h->hits == 0) {
    h->kind = kind;
    h->hits = 1;
    h->shape = shape;
    return 0;
  }
  if (h->shape < shape) h->shape = shape;
  return h->hits++;
}

static void cmplog_ins(uintptr_t pc, uint8_t size, uint64_t a, uint64_t b, uint8_t a_const) {
  uintptr_t k = cmplog_key(pc);
  uint16_t hit = cmplog_hit(k, CMPLOG_KIND_INS, size - 1) & (CMPLOG_H - 1);
  cmplog_operands *o = &cmplog->vals.operands[k][hit];
  o->v0 = a;
  o->v1 = b;
  o->v0_is_const = a_const;
}

static void cmplog_rtn(uintptr_t pc, const void *a, const void *b, size_t n) {
  if (n > CMPLOG_RTN_LEN) n = CMPLOG_RTN_LEN;
  if (n == 0) return;
  uintptr_t k = cmplog_key(pc);
  uint16_t hit = cmplog_hit(k, CMPLOG_KIND_RTN, (uint8_t)(n - 1)) & (CMPLOG_RTN_H - 1);
  cmplog_routine *r = &cmplog->vals.routines[k][hit];
  memset(r, 0, sizeof *r);
  memcpy(r->v0, a, n);
  memcpy(r->v1, b, n);
}

#define RETADDR ((uintptr_t)__builtin_return_address(0))
#define TRACE_CMP(bits, type, is_const)                                        \
  void __sanitizer_cov_trace_##is_const##cmp##bits(type a, type b);           \
  void __sanitizer_cov_trace_##is_const##cmp##bits(type a, type b) {          \
    if (cmplog) cmplog_ins(RETADDR, sizeof(type), a, b, sizeof(#is_const) > 1); \
  }
TRACE_CMP(1, uint8_t, )
TRACE_CMP(2, uint16_t, )
TRACE_CMP(4, uint32_t, )
TRACE_CMP(8, uint64_t, )
TRACE_CMP(1, uint8_t, const_)
TRACE_CMP(2, uint16_t, const_)
TRACE_CMP(4, uint32_t, const_)
TRACE_CMP(8, uint64_t, const_)

void __sanitizer_cov_trace_switch(uint64_t val, uint64_t *cases) {
  if (!cmplog) return;
  // cases[0]: how many; cases[1]: their size in bits; then the values.
  for (uint64_t i = 0; i < cases[0]; i++)
    cmplog_ins(RETADDR + i, (uint8_t)(cases[1] / 8), cases[i + 2], val, 1);
}

// The comparison functions the wrapper keeps as calls (-fno-builtin-...): ours, so the
// operands can be logged; simple and exact, and only this binary uses them.
int memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  size_t i = 0;
  while (i < n && x[i] == y[i]) i++;
  int r = i == n ? 0 : (int)x[i] - (int)y[i];
  if (cmplog && r) cmplog_rtn(RETADDR, a, b, n);
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
  if (cmplog && r) {
    size_t la = strnlen(a, CMPLOG_RTN_LEN), lb = strnlen(b, CMPLOG_RTN_LEN);
    size_t len = (la > lb ? la : lb) + 1;
    if (len > n) len = n;
    if (len > CMPLOG_RTN_LEN) len = CMPLOG_RTN_LEN;
    char pa[CMPLOG_RTN_LEN] = {0}, pb[CMPLOG_RTN_LEN] = {0};
    memcpy(pa, a, la < len ? la : len);
    memcpy(pb, b, lb < len ? lb : len);
    cmplog_rtn(pc, pa, pb, len);
  }
  return r;
}
int strcmp(const char *a, const char *b) { return str_n_cmp(a, b, (size_t)-1, 0, RETADDR); }
int strncmp(const char *a, const char *b, size_t n) { return str_n_cmp(a, b, n, 0, RETADDR); }
int strcasecmp(const char *a, const char *b) { return str_n_cmp(a, b, (size_t)-1, 1, RETADDR); }
int strncasecmp(const char *a, const char *b, size_t n) { return str_n_cmp(a, b, n, 1, RETADDR); }

// ASan: abort() on a report, so the fuzzer sees a crash signal. Strong: the ASan runtime's own
// weak default would otherwise win. ASAN_OPTIONS in the environment still takes precedence.
const char *__asan_default_options(void) {
  return "abort_on_error=1:symbolize=0:detect_leaks=0:allocator_may_return_null=1";
}

// UBSan's standalone runtime comes with every -fsanitize-coverage build (clang links it for the
// coverage callbacks) and catches SIGSEGV and friends to print a report and exit(1): the fuzzer
// would see a clean exit, late (the report is symbolized), instead of a crash. Let the signals
// kill the process, and make UBSan's own checks (-fsanitize=undefined) abort. The fuzzer sets the
// same options in UBSAN_OPTIONS (src/modes/forkserver.rs); this default is for runs by hand.
const char *__ubsan_default_options(void) {
  return "halt_on_error=1:abort_on_error=1:symbolize=0:handle_segv=0:handle_sigbus=0:"
         "handle_abort=0:handle_sigfpe=0:handle_sigill=0";
}

static size_t map_size(void) { return (size_t)(counters_stop - counters_start); }

static void die(const char *what) {
  fprintf(stderr, "lafuzz standalone runtime: %s: %s\n", what, strerror(errno));
  _exit(1);
}

static void map_cmplog(void) {
  const char *id = getenv("__LAFUZZ_CMPLOG_SHM_ID");
  if (!id) return;
  void *seg = shmat(atoi(id), NULL, 0);
  if (seg == (void *)-1) die("cannot attach __LAFUZZ_CMPLOG_SHM_ID");
  cmplog = seg;
}

// Puts the fuzzer's coverage segment over the counters' pages.
static void map_coverage(void) {
  const char *id = getenv("__AFL_SHM_ID");
  if (!id || !counters_start) return;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if ((uintptr_t)counters_start % page) {
    errno = EINVAL;
    die("coverage counters are not page-aligned: link with libafl_cc/libafl_cxx");
  }
  size_t len = (map_size() + page - 1) / page * page;
  int shm_id = atoi(id);
  struct shmid_ds ds;
  if (shmctl(shm_id, IPC_STAT, &ds) < 0) die("cannot inspect __AFL_SHM_ID");
  if (ds.shm_segsz < len) {
    errno = ENOSPC;
    die("coverage segment smaller than the counters (set the map size from AFL_DUMP_MAP_SIZE)");
  }
  void *seg = shmat(shm_id, NULL, 0);
  if (seg == (void *)-1) die("cannot attach __AFL_SHM_ID");
  // A second mapping of the same shared pages, placed over the counters.
  if (mremap(seg, 0, len, MREMAP_MAYMOVE | MREMAP_FIXED, counters_start) == MAP_FAILED)
    die("cannot map coverage over the counters");
  shmdt(seg);
}

static void map_testcase(void) {
  const char *id = getenv("__AFL_SHM_FUZZ_ID");
  if (!id) return;
  void *seg = shmat(atoi(id), NULL, 0);
  if (seg == (void *)-1) die("cannot attach __AFL_SHM_FUZZ_ID");
  shm_input = seg;
  __afl_fuzz_len = (uint32_t *)seg;
  __afl_fuzz_ptr = shm_input + 4;
}

static int write_u32(uint32_t v) { return write(FORKSRV_FD + 1, &v, 4) == 4 ? 0 : -1; }
static int read_u32(uint32_t *v) { return read(FORKSRV_FD, v, 4) == 4 ? 0 : -1; }

// Runs the fork server loop in the parent; returns in each child. Does nothing (returns at
// once) when no fuzzer is listening.
void __afl_manual_init(void) {
  if (forkserver_running) return;
  forkserver_running = 1;
  map_coverage();
  map_testcase();
  map_cmplog();
  if (write_u32(FS_VERSION) < 0) return;  // not run by a fuzzer
  uint32_t reply;
  if (read_u32(&reply) < 0 || reply != (FS_VERSION ^ 0xffffffffu)) _exit(1);
  uint32_t opts = FS_OPT_MAPSIZE | (shm_input ? FS_OPT_SHDMEM_FUZZ : 0);
  uint32_t dict_len = 0;
  uint8_t *tok_start = __start_libafl_token, *tok_stop = __stop_libafl_token;
  if (tok_start && tok_stop > tok_start) {
    dict_len = (uint32_t)(tok_stop - tok_start);
    if (dict_len >= 2) opts |= FS_OPT_AUTODICT;
  }
  if (write_u32(opts) < 0 || write_u32((uint32_t)map_size()) < 0) _exit(1);
  if ((opts & FS_OPT_AUTODICT) &&
      (write_u32(dict_len) < 0 ||
       write(FORKSRV_FD + 1, __start_libafl_token, dict_len) != (ssize_t)dict_len))
    _exit(1);
  if (write_u32(FS_VERSION) < 0) _exit(1);

  const char *p = getenv("__AFL_PERSISTENT");
  persistent = p && strcmp(p, "1") == 0;
  pid_t child = -1;
  int child_stopped = 0;
  for (;;) {
    uint32_t was_killed;
    if (read_u32(&was_killed) < 0) {
      // The fuzzer is gone: take a stopped persistent child along.
      if (child > 0) kill(child, SIGKILL);
      _exit(0);
    }
    if (child_stopped && was_killed) {
      child_stopped = 0;
      waitpid(child, NULL, 0);
    }
    if (child_stopped) {
      kill(child, SIGCONT);
      child_stopped = 0;
    } else {
      child = fork();
      if (child < 0) _exit(1);
      if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the fork server
        close(FORKSRV_FD);
        close(FORKSRV_FD + 1);
        in_child = 1;
        return;
      }
    }
    int status;
    if (write_u32((uint32_t)child) < 0) _exit(1);
    if (waitpid(child, &status, persistent ? WUNTRACED : 0) < 0) _exit(1);
    if (WIFSTOPPED(status)) child_stopped = 1;
    if (write_u32((uint32_t)status) < 0) _exit(1);
  }
}

// AFL++'s __AFL_LOOP(N): true while there is another input to run in this process.
int __afl_persistent_loop(unsigned int max_cnt) {
  static unsigned int done;
  static int first = 1;
  if (first) {
    first = 0;
    __afl_manual_init();
    done = 1;
    return 1;
  }
  if (!in_child || !persistent || done >= max_cnt) return 0;
  done++;
  raise(SIGSTOP);  // the fork server resumes us with SIGCONT when the next input is ready
  return 1;
}

static size_t read_all(int fd, uint8_t *buf, size_t cap) {
  size_t n = 0;
  ssize_t r;
  while (n < cap && (r = read(fd, buf + n, cap - n)) > 0) n += (size_t)r;
  return n;
}

// The input of this iteration: shared memory, the file named on the command line, or stdin.
static size_t current_input(uint8_t *buf, const char *file, const uint8_t **data) {
  if (shm_input) {
    *data = __afl_fuzz_ptr;
    return *__afl_fuzz_len;
  }
  *data = buf;
  if (!file) {
    lseek(0, 0, SEEK_SET);
    return read_all(0, buf, MAX_FILE_INPUT);
  }
  FILE *f = fopen(file, "rb");
  if (!f) die(file);
  size_t n = fread(buf, 1, MAX_FILE_INPUT, f);
  fclose(f);
  return n;
}

// Before any main, ours or the program's (and after SanitizerCoverage's own constructors,
// which run at priority 2 and register the counters): answer a fuzzer's size probe.
__attribute__((constructor)) static void dump_map_size(void) {
  if (getenv("AFL_DUMP_MAP_SIZE")) {
    printf("%zu\n", map_size());
    fflush(stdout);
    _exit(0);
  }
}

__attribute__((weak)) int main(int argc, char **argv) {
  if (!LLVMFuzzerTestOneInput) {
    fprintf(stderr, "lafuzz standalone runtime: no main and no LLVMFuzzerTestOneInput\n");
    return 1;
  }
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  static uint8_t buf[MAX_FILE_INPUT];
  const uint8_t *data;
  __afl_manual_init();
  if (!in_child) {
    // Run by hand: each file once, in order (or stdin).
    if (argc < 2) {
      size_t n = current_input(buf, NULL, &data);
      LLVMFuzzerTestOneInput(data, n);
    }
    for (int i = 1; i < argc; i++) {
      size_t n = current_input(buf, argv[i], &data);
      LLVMFuzzerTestOneInput(data, n);
    }
    return 0;
  }
  const char *file = argc > 1 ? argv[1] : NULL;
  while (__afl_persistent_loop(PERSISTENT_DEFAULT)) {
    size_t n = current_input(buf, file, &data);
    LLVMFuzzerTestOneInput(data, n);
  }
  return 0;
}
