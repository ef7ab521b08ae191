// overflow: a heap-buffer over-read that does not crash without AddressSanitizer. Built with
// -fsanitize=address it shows that ASan reports reach the fuzzer as crashes.
//   input starting "OVER" -> reads one byte past a 4-byte heap block
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) return 0;
  char *block = malloc(4);
  memcpy(block, data, 4);
  volatile char c = 0;
  if (block[0] == 'O' && block[1] == 'V' && block[2] == 'E') c = block[3 + (block[3] == 'R')];
  free(block);
  return c;
}
