// crashme: a tiny target with planted bugs, for tests and for seeing a crash found.
//   input starting "CRAS" -> abort()            (a crash)
//   input starting "BOOM" -> write through NULL  (a second, different crash)
//   input starting "HANG" -> endless loop        (a hang)
// Each byte is its own branch, so coverage guides the fuzzer one byte at a time.
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static volatile int sink;
static volatile uintptr_t sink_null;  // always 0; volatile so the compiler keeps the write

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) return 0;
  if (data[0] == 'C') {
    sink++;
    if (data[1] == 'R') {
      sink++;
      if (data[2] == 'A') {
        sink++;
        if (data[3] == 'S') abort();
      }
    }
  }
  if (data[0] == 'B') {
    sink++;
    if (data[1] == 'O') {
      sink++;
      if (data[2] == 'O') {
        sink++;
        if (data[3] == 'M') *(volatile int *)(uintptr_t)sink_null = 1;
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
