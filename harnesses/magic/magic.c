// magic: a crash behind comparisons that coverage alone cannot get past: a 1-, 2-, 4- and
// 8-byte integer compare, and a 13-byte memcmp. Comparison solving (CmpLog) finds it from a
// zero-filled seed; without it, the 4- and 8-byte values are out of reach.
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t a;
  uint16_t b;
  uint32_t c;
  uint64_t d;
  if (size < 32) return 0;
  memcpy(&a, data, sizeof a);
  memcpy(&b, data + 1, sizeof b);
  memcpy(&c, data + 3, sizeof c);
  memcpy(&d, data + 7, sizeof d);
  if (a != 0xA5) return 0;
  if (b != 0x1337) return 0;
  if (c != 0xDEADBEEFu) return 0;
  if (d != 0x0123456789ABCDEFull) return 0;
  if (memcmp(data + 15, "LIBAFL-MAGIC!", 13) != 0) return 0;
  abort();
}
