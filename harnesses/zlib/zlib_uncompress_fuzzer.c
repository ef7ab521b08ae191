// zlib's one-shot decompressor, as in FuzzBench's zlib_zlib_uncompress_fuzzer (OSS-Fuzz's
// zlib project): every input is a zlib stream to inflate into a fixed buffer.
#include <stddef.h>
#include <stdint.h>

#include "zlib.h"

static uint8_t buffer[256 * 1024];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uLongf length = sizeof(buffer);
  (void)uncompress(buffer, &length, data, size);
  return 0;
}
