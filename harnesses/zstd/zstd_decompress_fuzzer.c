// Zstandard's one-shot decompressor, in the manner of zstd's own simple_decompress fuzzer
// (OSS-Fuzz's zstd project): every input is a sequence of frames to decompress into a fixed
// buffer, with one context kept between inputs as an application keeps it.
#include <stddef.h>
#include <stdint.h>

#include "zstd.h"

static uint8_t buffer[256 * 1024];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static ZSTD_DCtx *context;
  if (!context) context = ZSTD_createDCtx();
  (void)ZSTD_decompressDCtx(context, buffer, sizeof(buffer), data, size);
  return 0;
}
