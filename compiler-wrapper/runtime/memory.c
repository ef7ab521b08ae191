// memory.c: the memory limit of a fuzzed child. When the fuzzer sets LAFUZZ_RSS_LIMIT_ENV_VAR, a
// watchdog thread in each child reads the child's resident memory and, over the limit, raises
// the flag the fuzzer shares (LAFUZZ_OOM_SHM_ENV_VAR) and kills the child: the fuzzer reports the
// input as out-of-memory. Only the child is limited, never the fuzzer or the fork server.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/shm.h>
#include <unistd.h>

#include "lafuzz_runtime.h"

static unsigned long limit_mb;
static volatile uint8_t *oom_flag;

// Resident memory in MiB (/proc/self/statm's second field, in pages), or 0 when unreadable.
static unsigned long resident_mb(void) {
  char buf[128];
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  unsigned long size, resident;
  if (sscanf(buf, "%lu %lu", &size, &resident) != 2) return 0;
  return (resident * (unsigned long)sysconf(_SC_PAGESIZE)) >> 20;
}

static void *watch(void *unused) {
  (void)unused;
  for (;;) {
    usleep(10 * 1000);
    if (resident_mb() > limit_mb) {
      if (oom_flag) *oom_flag = 1;
      kill(getpid(), SIGKILL);
    }
  }
  return NULL;
}

void lafuzz_watch_memory(void) {
  const char *limit = getenv(LAFUZZ_RSS_LIMIT_ENV_VAR);
  if (!limit || !(limit_mb = strtoul(limit, NULL, 10))) return;
  const char *id = getenv(LAFUZZ_OOM_SHM_ENV_VAR);
  if (id) {
    void *flag = shmat(atoi(id), NULL, 0);
    // Without the flag an input over the limit still stops the child, as a crash.
    if (flag != (void *)-1) oom_flag = flag;
  }
  pthread_t thread;
  if (pthread_create(&thread, NULL, watch, NULL) == 0) pthread_detach(thread);
}
