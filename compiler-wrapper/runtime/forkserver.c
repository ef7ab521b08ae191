// lafuzz standalone runtime, the fork server: runs the target's inputs. Linked (with answers.c,
// protocol.c, memory.c, cmplog.c, compare.c and sanitizers.c) by `libafl_cc --standalone`
// instead of the in-process fuzzer, it makes an ordinary executable that
//   - run by hand (`./target FILE...`, or stdin), runs each input once: how users reproduce;
//   - run by a fuzzer, speaks AFL++'s fork server protocol (version 1 of the "new" model, as
//     LibAFL's ForkserverExecutor and afl-fuzz expect) on fds 198/199, with the coverage map
//     in `__AFL_SHM_ID`, the testcase in `__AFL_SHM_FUZZ_ID` shared memory when offered, and
//     persistent mode (`__AFL_PERSISTENT`: AFL++'s child stops itself with SIGSTOP per input
//     and the fork server answers for it; ours, told the timeout signal, answers itself).
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

#include "lafuzz_runtime.h"

// The most bytes of an input read from a file or stdin (as __AFL_FUZZ_INIT's buffer).
#define MAX_FILE_INPUT (1u << 20)
// Inputs per persistent child when the program runs them through our main. A fresh child
// costs a fork and the faults of its first writes to each page: every 10,000 inputs that was
// 4% of libpng's persistent speed; every 100,000 still bounds what a leaking target piles up.
#define PERSISTENT_DEFAULT 100000

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
static pid_t own_pid;  // the child's, as the fuzzer knows it
static int answers_directly;  // see answers.c
static unsigned char *shm_input;  // 4-byte length, then the bytes

// libafl_cc's autotokens pass puts string constants here.
extern uint8_t __start_libafl_token[] __attribute__((weak));
extern uint8_t __stop_libafl_token[] __attribute__((weak));

void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop) {
  if (!counters_start || start < counters_start) counters_start = start;
  if (stop > counters_stop) counters_stop = stop;
}

static size_t map_size(void) { return (size_t)(counters_stop - counters_start); }

static void die(const char *what) {
  fprintf(stderr, "lafuzz standalone runtime: %s: %s\n", what, strerror(errno));
  _exit(1);
}

// Puts the fuzzer's coverage segment over the counters' pages.
static void map_coverage(void) {
  const char *id = getenv(SHM_ENV_VAR);
  // Empty: a comparison tracer, whose coverage nobody reads (and whose map may differ).
  if (!id || !*id || !counters_start) return;
  // The kernel's page, which mremap works in (the linker script aligns to LAFUZZ_PAGE_SIZE).
  long page_size = sysconf(_SC_PAGESIZE);
  if (page_size < 0) die("cannot get the page size");
  size_t page = (size_t)page_size;
  if ((uintptr_t)counters_start % page) {
    errno = EINVAL;
    die("coverage counters are not page-aligned: link with libafl_cc/libafl_cxx");
  }
  size_t len = (map_size() + page - 1) / page * page;
  int shm_id = atoi(id);
  struct shmid_ds ds;
  if (shmctl(shm_id, IPC_STAT, &ds) < 0) die("cannot inspect " SHM_ENV_VAR);
  if (ds.shm_segsz < len) {
    errno = ENOSPC;
    die("coverage segment smaller than the counters "
        "(set the map size from " DUMP_MAP_SIZE_ENV_VAR ")");
  }
  void *seg = shmat(shm_id, NULL, 0);
  if (seg == (void *)-1) die("cannot attach " SHM_ENV_VAR);
  // A second mapping of the same shared pages, placed over the counters.
  if (mremap(seg, 0, len, MREMAP_MAYMOVE | MREMAP_FIXED, counters_start) == MAP_FAILED)
    die("cannot map coverage over the counters");
  if (shmdt(seg) < 0) die("cannot detach " SHM_ENV_VAR);
}

static void map_testcase(void) {
  const char *id = getenv(SHM_FUZZ_ENV_VAR);
  if (!id) return;
  void *seg = shmat(atoi(id), NULL, 0);
  if (seg == (void *)-1) die("cannot attach " SHM_FUZZ_ENV_VAR);
  shm_input = seg;
  __afl_fuzz_len = (uint32_t *)seg;
  __afl_fuzz_ptr = shm_input + 4;
}

// Runs the fork server loop in the parent; returns in each child. Does nothing (returns at
// once) when no fuzzer is listening.
void __afl_manual_init(void) {
  if (forkserver_running) return;
  forkserver_running = 1;
  map_coverage();
  map_testcase();
  if (lafuzz_cmplog_attach() < 0) die("cannot attach " LAFUZZ_CMPLOG_SHM_ENV_VAR);
  if (lafuzz_write_u32(FS_VERSION) < 0) return;  // not run by a fuzzer
  uint32_t reply;
  if (lafuzz_read_u32(&reply) < 0 || reply != (FS_VERSION ^ 0xffffffffu)) _exit(1);
  uint32_t opts = FS_OPT_MAPSIZE | (shm_input ? FS_OPT_SHDMEM_FUZZ : 0);
  uint32_t dict_len = 0;
  uint8_t *tok_start = __start_libafl_token, *tok_stop = __stop_libafl_token;
  if (tok_start && tok_stop > tok_start) {
    dict_len = (uint32_t)(tok_stop - tok_start);
    if (dict_len >= 2) opts |= FS_OPT_AUTODICT;
  }
  if (lafuzz_write_u32(opts) < 0 || lafuzz_write_u32((uint32_t)map_size()) < 0) _exit(1);
  if ((opts & FS_OPT_AUTODICT) &&
      (lafuzz_write_u32(dict_len) < 0 ||
       write(FORKSRV_FD + 1, __start_libafl_token, dict_len) != (ssize_t)dict_len))
    _exit(1);
  if (lafuzz_write_u32(FS_VERSION) < 0) _exit(1);

  const char *p = getenv(PERSIST_ENV_VAR);
  persistent = p && strcmp(p, "1") == 0;
  if (persistent) answers_directly = lafuzz_setup_direct_answers();
  lafuzz_memory_limit_setup();
  pid_t child = -1;
  int child_stopped = 0;
  for (;;) {
    uint32_t was_killed;
    if (lafuzz_read_u32(&was_killed) < 0) {
      // The fuzzer is gone: take a stopped persistent child along. Its result does not matter:
      // it fails only when the child is gone already, and we exit either way.
      if (child > 0) kill(child, SIGKILL);
      _exit(0);
    }
    if (child_stopped && was_killed) {
      child_stopped = 0;
      // Reap the stopped child the fuzzer killed (a timeout), before forking its successor.
      if (waitpid(child, NULL, 0) < 0) _exit(1);
    }
    if (child_stopped) {
      if (kill(child, SIGCONT) < 0) _exit(1);
      child_stopped = 0;
    } else {
      lafuzz_pid_reported(0);
      child = fork();
      if (child < 0) _exit(1);
      if (child == 0) {
        // Never outlive the fork server.
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) die("cannot set the parent-death signal");
        if (!answers_directly && (close(FORKSRV_FD) < 0 || close(FORKSRV_FD + 1) < 0))
          die("cannot close the fork server's fds");
        in_child = 1;
        own_pid = getpid();
        lafuzz_watch_memory();
        return;
      }
    }
    int status;
    if (lafuzz_write_u32((uint32_t)child) < 0) _exit(1);
    lafuzz_pid_reported(1);
    if (waitpid(child, &status, persistent ? WUNTRACED : 0) < 0) _exit(1);
    if (WIFSTOPPED(status))
      child_stopped = 1;
    else
      child = -1;  // reaped: its pid may be reused
    if (lafuzz_write_u32((uint32_t)status) < 0) _exit(1);
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
  if (answers_directly) {
    lafuzz_answer_and_take_the_go(own_pid);
    return 1;
  }
  // The fork server resumes us with SIGCONT when the next input is ready; running on without
  // stopping would run an input the fuzzer has not written yet.
  if (raise(SIGSTOP) != 0) die("cannot stop for the next input");
  return 1;
}

static size_t read_all(int fd, uint8_t *buf, size_t cap) {
  size_t n = 0;
  ssize_t r;
  while (n < cap && (r = read(fd, buf + n, cap - n)) != 0) {
    if (r < 0) {
      if (errno == EINTR) continue;  // a harness's signal handler: not the end of the input
      die("cannot read stdin");
    }
    n += (size_t)r;
  }
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
    // A fuzzer rewrites the same stdin file for each input; a pipe (run by hand) cannot seek,
    // and is read once.
    if (lseek(0, 0, SEEK_SET) < 0 && errno != ESPIPE) die("cannot rewind stdin");
    return read_all(0, buf, MAX_FILE_INPUT);
  }
  FILE *f = fopen(file, "rb");
  if (!f) die(file);
  size_t n = fread(buf, 1, MAX_FILE_INPUT, f);
  if (ferror(f)) die(file);  // a short read is the file's end, or this
  fclose(f);  // read-only: nothing to flush, nothing to lose
  return n;
}

// Before any main, ours or the program's (and after SanitizerCoverage's own constructors,
// which run at priority 2 and register the counters): answer a fuzzer's size probe.
__attribute__((constructor)) static void dump_map_size(void) {
  if (getenv(DUMP_MAP_SIZE_ENV_VAR)) {
    // Unwritten, the size would read as "not a fuzzing target": say why instead.
    if (printf("%zu\n", map_size()) < 0 || fflush(stdout) != 0)
      die("cannot print the map size");
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
