// buckets: two different bugs along the same coverage, for crash triage. Which one fires
// depends on a byte's value, not on a branch, so coverage cannot tell them apart; only the
// crash's description (its kind) can.
//   "D0..." -> division by zero (SIGFPE)
//   "Dx!..." with x != '0' -> write through NULL (SIGSEGV)
//   "Dxy..." otherwise -> nothing
#include <stddef.h>
#include <stdint.h>

static volatile int sink;

__attribute__((noinline)) static void divide_and_store(const uint8_t *data) {
  volatile int divisor = data[1] - '0';
  int quotient = 1000 / divisor;
  // NULL when data[2] is '!': a multiplication, no branch.
  volatile int *target = (volatile int *)((uintptr_t)&sink * (uintptr_t)(data[2] != '!'));
  *target = quotient;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size >= 3 && data[0] == 'D') divide_and_store(data);
  return 0;
}
