// slowinput: one input family slower than the rest, and one that never ends, for the timeout
// chosen from the seeds' run times (no -t): the slow one must not be saved as a hang.
//   input starting "SLOW" -> runs 200 ms, then creates the file named by $SLOWINPUT_MARKER
//   input starting "HANG" -> endless loop (a hang)
// Each byte is its own branch, so coverage guides the fuzzer one byte at a time.
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile int sink;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void run_slowly(void) {
  double start = now_ms();
  while (now_ms() - start < 200) sink++;
  const char *marker = getenv("SLOWINPUT_MARKER");
  if (marker) {
    int fd = open(marker, O_WRONLY | O_CREAT, 0644);
    if (fd >= 0) close(fd);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) return 0;
  if (data[0] == 'S') {
    sink++;
    if (data[1] == 'L') {
      sink++;
      if (data[2] == 'O') {
        sink++;
        if (data[3] == 'W') run_slowly();
      }
    }
  }
  if (data[0] == 'H') {
    sink++;
    if (data[1] == 'A') {
      sink++;
      if (data[2] == 'N') {
        sink++;
        if (data[3] == 'G') {
          for (;;) sink++;
        }
      }
    }
  }
  return 0;
}
