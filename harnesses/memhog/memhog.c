// memhog: a target whose inputs can use too much memory, for the memory-limit tests.
//   input starting "LEAK" -> leaks 64 MiB per execution (touched, never freed)
//   input starting "HOG!" -> allocates and touches 8 GiB, 64 MiB at a time, then frees it
//   input starting "CRSH" -> abort()   (an ordinary crash, still to be found)
// Each byte is its own branch, so coverage guides the fuzzer one byte at a time.
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK ((size_t)64 << 20)

static volatile int sink;

static int starts(const uint8_t *data, size_t size, const char *word) {
  for (int i = 0; i < 4; i++) {
    if (size <= (size_t)i || data[i] != (uint8_t)word[i]) return 0;
    sink++;
  }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (starts(data, size, "LEAK")) {
    char *leak = malloc(CHUNK);
    if (leak) memset(leak, 1, CHUNK);
  }
  if (starts(data, size, "HOG!")) {
    char *chunks[128] = {0};
    for (int i = 0; i < 128; i++) {
      chunks[i] = malloc(CHUNK);
      if (!chunks[i]) break;
      memset(chunks[i], 1, CHUNK);
    }
    for (int i = 0; i < 128; i++) free(chunks[i]);
  }
  if (starts(data, size, "CRSH")) abort();
  return 0;
}
