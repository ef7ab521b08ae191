// leak: memory that one family of inputs never frees, for leak detection (LeakSanitizer, built
// with -fsanitize=address or -fsanitize=leak).
//   input starting "LK" -> 32 bytes allocated and never freed
//   anything else       -> 32 bytes allocated and freed
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *block = malloc(32);
  memcpy(block, data, size < 32 ? size : 32);
  // The block escapes, so the compiler keeps the allocation.
  __asm__ volatile("" : : "r"(block) : "memory");
  if (size >= 2 && data[0] == 'L' && data[1] == 'K') return 0;
  free(block);
  return 0;
}
