// clang's profile runtime (a `libafl_cc --coverage` build links it), looked up through weak
// symbols: Rust cannot declare those on stable, and a fuzzing build has no such runtime.
#include <signal.h>
#include <string.h>

__attribute__((weak)) int __llvm_profile_write_file(void);
__attribute__((weak)) void __llvm_profile_set_filename(const char *);

// 1 when the profile runtime is linked (the binary was built with --coverage).
int lafuzz_profile_linked(void) {
  return __llvm_profile_write_file != 0 && __llvm_profile_set_filename != 0;
}

// Where this process (and the children it forks) write their profile; the runtime copies it.
void lafuzz_profile_set_filename(const char *pattern) {
  if (lafuzz_profile_linked()) __llvm_profile_set_filename(pattern);
}

// Writes the counters now (a forked child leaves with _exit, skipping the runtime's atexit).
int lafuzz_profile_write(void) { return lafuzz_profile_linked() ? __llvm_profile_write_file() : -1; }

// On a crash or a timeout, the lines run before it still count: write, then die of the same
// signal (the handler is reset first). Not async-signal-safe, but only a dying child runs it;
// one that deadlocks in it is killed by its parent's backstop.
static void write_and_die(int sig) {
  lafuzz_profile_write();
  raise(sig);
}

void lafuzz_profile_write_on_fatal_signals(void) {
  static const int signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGALRM};
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = write_and_die;
  action.sa_flags = SA_RESETHAND | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) sigaction(signals[i], &action, 0);
}
