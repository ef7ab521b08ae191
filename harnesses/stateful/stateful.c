// stateful: a target whose crash depends on the input that ran before, to show what state
// leaking between in-process inputs does, and what a reset hook fixes.
//   an input starting 'A' arms a global flag;
//   an input starting 'B' crashes if the flag is armed; any other input disarms it.
// Alone, no input crashes: only the sequence "A...", "B..." does. LLVMFuzzerReset (left out
// when built with -DNO_RESET) disarms the flag after every input in `reset` mode.
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static int armed;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  if (data[0] == 'A') {
    armed = 1;
    return 0;
  }
  if (data[0] == 'B' && armed) abort();
  armed = 0;
  return 0;
}

#ifndef NO_RESET
void LLVMFuzzerReset(void) { armed = 0; }
#endif
