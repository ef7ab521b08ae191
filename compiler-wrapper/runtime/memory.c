// memory.c: the memory limit of a fuzzed child. When the fuzzer sets LAFUZZ_RSS_LIMIT_ENV_VAR,
// each child arms a CPU-time timer (one system call; a watchdog thread per child cost a fifth
// of fork-server speed); its SIGPROF handler reads the child's resident memory every 10 ms of
// CPU and, over the limit, raises the flag the fuzzer shares (LAFUZZ_OOM_SHM_ENV_VAR) and kills
// the child: the fuzzer reports the input as out-of-memory. Only the child is limited, never
// the fuzzer or the fork server.
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/time.h>
#include <unistd.h>

#include "lafuzz_runtime.h"

static unsigned long limit_pages;
static volatile uint8_t *oom_flag;

// Resident pages (/proc/self/statm's second field), or 0 when unreadable; async-signal-safe.
static unsigned long resident_pages(void) {
  char buf[128];
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char *p = strchr(buf, ' ');
  if (!p) return 0;
  unsigned long pages = 0;
  for (p++; *p >= '0' && *p <= '9'; p++) pages = pages * 10 + (unsigned long)(*p - '0');
  return pages;
}

static void on_cpu_tick(int sig) {
  (void)sig;
  // Between an answer and the next go, ending would leave the fuzzer a second answer.
  if (lafuzz_answering()) return;
  if (resident_pages() > limit_pages) {
    if (oom_flag) *oom_flag = 1;
    kill(getpid(), SIGKILL);
  }
}

void lafuzz_memory_limit_setup(void) {
  const char *limit = getenv(LAFUZZ_RSS_LIMIT_ENV_VAR);
  unsigned long mb = limit ? strtoul(limit, NULL, 10) : 0;
  long page = sysconf(_SC_PAGESIZE);
  if (!mb || page <= 0) return;
  const char *id = getenv(LAFUZZ_OOM_SHM_ENV_VAR);
  if (id) {
    void *flag = shmat(atoi(id), NULL, 0);
    // Without the flag an input over the limit still stops the child, as a crash.
    if (flag != (void *)-1) oom_flag = flag;
  }
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_cpu_tick;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  // Without the handler there is no limit: fuzzing goes on.
  if (sigaction(SIGPROF, &action, NULL) == 0) limit_pages = (mb << 20) / (unsigned long)page;
}

void lafuzz_watch_memory(void) {
  if (!limit_pages) return;
  struct itimerval timer = {{0, 10 * 1000}, {0, 10 * 1000}};
  setitimer(ITIMER_PROF, &timer, NULL);
}
