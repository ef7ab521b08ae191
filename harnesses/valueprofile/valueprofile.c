// valueprofile: a crash behind a comparison of a transformed input word. The compared value is
// not in the input, so input-to-state replacement cannot solve it, nor can a dictionary; value
// profile (how many bits of the operands are equal, as coverage) climbs to it bit by bit.
//   first 4 bytes x with rotl(x ^ K1, 7) == K3 -> abort()
// Each bit of the compared value comes from one bit of x, so every step of the climb is one bit
// flip away (with an addition in the transform, carries made some climbs stop short: 1 run in 4
// missed the crash in 2 M executions). The constants are volatile so the compiler cannot solve
// the equation for x itself.
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static volatile uint32_t k1 = 0x5a5aa5a5u, k3 = 0xdeadbeefu;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) return 0;
  uint32_t x;
  memcpy(&x, data, 4);
  uint32_t y = x ^ k1;
  if (((y << 7) | (y >> 25)) == k3) abort();
  return 0;
}
