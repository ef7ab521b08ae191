// answers.c: a persistent child of ours that answers the fuzzer itself between inputs, and the
// phase it is in, which the timeout signal's handler and the memory watcher (memory.c) read.
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lafuzz_runtime.h"

// Where a child that answers directly is, for the timeout signal's handler (on any of its
// threads) and the memory watcher: running an input, answering (from the answer to the next
// go: a timeout that raced the answer must not end the child there), or ending.
enum { RUNNING_INPUT, ANSWERING, ENDING };
static int child_phase = RUNNING_INPUT;
// Shared with the children: set once the fork server has reported the newest child's pid. A
// fresh child may finish its first input before its parent writes the pid; its answer must
// come after (the fuzzer would take it for the pid, and the pid for a crash).
static volatile int *pid_reported;

// The timeout signal: ends a child running an input (as the default action, which it restores);
// one that came while the child answered is the fuzzer's too late, and its next go says so.
static void on_timeout_signal(int number) {
  int running = RUNNING_INPUT;
  if (!__atomic_compare_exchange_n(&child_phase, &running, ENDING, 0, __ATOMIC_SEQ_CST,
                                   __ATOMIC_SEQ_CST))
    return;
  signal(number, SIG_DFL);
  raise(number);  // delivered, and fatal, once this handler returns
}

int lafuzz_answering(void) {
  return __atomic_load_n(&child_phase, __ATOMIC_SEQ_CST) != RUNNING_INPUT;
}

// A persistent child answers the fuzzer itself when the fuzzer names the signal that stops it
// on a timeout: the fork server forks, reports the child and waits for its end, and in between
// the child tells the fuzzer each input's end (as a stop would read) and takes the next go
// itself. Two context switches per input instead of four (fuzzer, fork server, child, fork
// server): libpng 2.6x execs (bench, 20 s). The fds stay open in the child, closed on exec.
int lafuzz_setup_direct_answers(void) {
  const char *signal = getenv(LAFUZZ_TIMEOUT_SIGNAL_ENV_VAR);
  int number = signal ? atoi(signal) : 0;
  if (number <= 0 || number == SIGKILL || number == SIGSTOP || number >= NSIG) return 0;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_timeout_signal;
  action.sa_flags = SA_RESTART;
  if (sigemptyset(&action.sa_mask) < 0) return 0;
  if (fcntl(FORKSRV_FD, F_SETFD, FD_CLOEXEC) < 0 || fcntl(FORKSRV_FD + 1, F_SETFD, FD_CLOEXEC) < 0)
    return 0;
  void *shared = mmap(NULL, sizeof *pid_reported, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) return 0;
  if (sigaction(number, &action, NULL) < 0) return 0;
  pid_reported = shared;
  return 1;
}

// Between two inputs of a child that answers directly: this input's end, then the next go.
// A timeout signal that came after the answer was written (the fuzzer read it after sending
// the signal) is ignored, and the go says the fuzzer asks for a fresh child: we go on as one.
void lafuzz_answer_and_take_the_go(pid_t own_pid) {
  static const uint32_t stopped = (SIGSTOP << 8) | 0x7f;  // what waitpid reports of a stop
  int running = RUNNING_INPUT;
  if (!__atomic_compare_exchange_n(&child_phase, &running, ANSWERING, 0, __ATOMIC_SEQ_CST,
                                   __ATOMIC_SEQ_CST))
    for (;;) pause();  // the timeout signal is ending us
  while (!__atomic_load_n(pid_reported, __ATOMIC_ACQUIRE)) sched_yield();
  if (lafuzz_write_u32(stopped) < 0) _exit(0);  // the fuzzer is gone
  uint32_t go;  // non-zero: the last input timed out; alive, we serve as the fresh child
  if (lafuzz_read_u32(&go) < 0) _exit(0);  // the fuzzer is gone
  // Running again before the pid goes out: the fuzzer signals only after it has read the pid.
  __atomic_store_n(&child_phase, RUNNING_INPUT, __ATOMIC_SEQ_CST);
  if (lafuzz_write_u32((uint32_t)own_pid) < 0) _exit(0);
}

// The fork server, before it forks a child (0) and once it has written the child's pid (1).
void lafuzz_pid_reported(int reported) {
  if (pid_reported) __atomic_store_n(pid_reported, reported, __ATOMIC_RELEASE);
}
