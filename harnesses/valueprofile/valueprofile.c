// valueprofile: a crash behind a comparison of a transformed input word. The compared value is
// not in the input, so input-to-state replacement cannot solve it, nor can a dictionary; value
// profile (how many bits of the operands are equal, as coverage) climbs to it bit by bit.
//   first 4 bytes x with ((x ^ K1) + K2) == K3 -> abort()
// The constants are volatile so the compiler cannot solve the equation for x itself.
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static volatile uint32_t k1 = 0x5a5aa5a5u, k2 = 0x01020304u, k3 = 0xdeadbeefu;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) return 0;
  uint32_t x;
  memcpy(&x, data, 4);
  if (((x ^ k1) + k2) == k3) abort();
  return 0;
}
