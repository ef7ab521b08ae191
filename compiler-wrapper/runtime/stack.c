// lafuzz standalone runtime: the stack of a crash or hang, for the fuzzer's description of a
// finding (src/triage/). Run alone with LAFUZZ_PRINT_STACK_ENV_VAR set, a fatal signal prints
// `ERROR: lafuzz: deadly signal SIGNAME` (`timeout` for the fuzzer's SIGALRM) and the stack as
// sanitizers print theirs: the sanitizer's own symbolized one when linked, else `#N 0xADDR in
// FUNCTION (MODULE+0xOFFSET)` from glibc's backtrace and dladdr, which the fuzzer symbolizes
// (dladdr names only exported functions). Never under a fork server: there a crash is the fuzzer's
// to see, fast.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lafuzz_runtime.h"

__attribute__((weak)) void __sanitizer_print_stack_trace(void);

#define MAX_FRAMES 64

// The crashes, and the fuzzer's SIGALRM when the run is out of time (a hang's stack).
static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGALRM};

static const char *signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    case SIGTRAP: return "SIGTRAP";
    default: return "signal";
  }
}

static void lafuzz_print_frames(void) {
  void *pcs[MAX_FRAMES];
  int n = backtrace(pcs, MAX_FRAMES);
  for (int i = 0; i < n; i++) {
    Dl_info info;
    uintptr_t pc = (uintptr_t)pcs[i];
    // A return address: the call is the byte before it (the first frame is the handler's).
    uintptr_t at = i > 0 ? pc - 1 : pc;
    if (dladdr((void *)at, &info) && info.dli_fname) {
      fprintf(stderr, "    #%d 0x%lx in %s (%s+0x%lx)\n", i, (unsigned long)pc,
              info.dli_sname ? info.dli_sname : "??", info.dli_fname,
              (unsigned long)(at - (uintptr_t)info.dli_fbase));
    } else {
      fprintf(stderr, "    #%d 0x%lx (\?\?)\n", i, (unsigned long)pc);
    }
  }
  fputc('\n', stderr);
}

static void lafuzz_on_fatal_signal(int sig) {
  // Back to the defaults first: a fault while printing ends the process as `sig` would.
  for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) signal(fatal[i], SIG_DFL);
  if (sig == SIGALRM)
    fprintf(stderr, "==%d== ERROR: lafuzz: timeout\n", (int)getpid());
  else
    fprintf(stderr, "==%d== ERROR: lafuzz: deadly signal %s\n", (int)getpid(), signal_name(sig));
  if (__sanitizer_print_stack_trace)
    __sanitizer_print_stack_trace();
  else
    lafuzz_print_frames();
  raise(sig);
}

__attribute__((constructor)) static void print_stack_on_fatal_signals(void) {
  if (!getenv(LAFUZZ_PRINT_STACK_ENV_VAR) || getenv(SHM_ENV_VAR)) return;
  // backtrace loads its unwinder on first use: not in a signal handler, then.
  void *warm_up[1];
  backtrace(warm_up, 1);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = lafuzz_on_fatal_signal;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) sigaction(fatal[i], &action, NULL);
}
