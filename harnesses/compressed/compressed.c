// compressed: libFuzzer's documented custom-mutator example. The input is a zlib stream, and
// the crash is behind a condition on the decompressed bytes: random mutations of the stream
// almost never decompress (its checksum breaks), so only a mutator that decompresses, mutates
// and compresses again reaches it. Build with -lz; -DNO_CUSTOM_MUTATOR leaves the mutator out.
//   a stream that decompresses to bytes starting "FUZZ" -> abort()
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static volatile int depth;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t plain[64];
  uLongf len = sizeof plain;
  if (uncompress(plain, &len, data, size) != Z_OK) return 0;
  // One branch per byte, each with its own store, so the compiler keeps them apart and each
  // byte matched is new coverage.
  if (len >= 1 && plain[0] == 'F') {
    depth = 1;
    if (len >= 2 && plain[1] == 'U') {
      depth = 2;
      if (len >= 3 && plain[2] == 'Z') {
        depth = 3;
        if (len >= 4 && plain[3] == 'Z') abort();
      }
    }
  }
  return 0;
}

#ifndef NO_CUSTOM_MUTATOR
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  (void)seed;
  uint8_t plain[64];
  uLongf len = sizeof plain;
  // An input that does not decompress starts over from a valid one, as libFuzzer's example.
  if (uncompress(plain, &len, data, size) != Z_OK) {
    memcpy(plain, "Hi", 2);
    len = 2;
  }
  len = LLVMFuzzerMutate(plain, len, sizeof plain);
  uLongf packed = max_size;
  if (compress(data, &packed, plain, len) != Z_OK) return 0;
  return packed;
}
#endif
