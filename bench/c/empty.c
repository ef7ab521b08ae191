// A harness that returns at once: fuzzing it measures the fuzzer's own cost per execution.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  (void)data;
  (void)size;
  return 0;
}
