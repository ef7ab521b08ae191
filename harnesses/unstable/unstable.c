// unstable: an edge that changes from one run of the same input to the next (a count kept
// across inputs, as a cache or a global would), beside one the input decides. Calibration
// finds the first unstable; it must not make inputs interesting, and stability shows it.
//   input starting "X" -> the one stable branch the fuzzer can find
#include <stddef.h>
#include <stdint.h>

static volatile int sink;
static unsigned runs;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  unsigned run = runs++;
  // A loop that runs on every other input, longer as more inputs ran: its hit count climbs
  // through every hit-count bucket over a campaign, a new maximum each time.
  unsigned loops = (run & 1) ? 2 + run / 4096 : 0;
  for (unsigned i = 0; i < loops; i++) sink++;
  if (size > 0 && data[0] == 'X') sink += 3;
  return 0;
}
