// aflstyle: a target written for AFL++'s source API (its own main, __AFL_INIT, __AFL_LOOP,
// shared-memory testcases), to show `libafl_cc --standalone` builds it unchanged.
// Crashes on input starting "CRAS"; one byte per branch, as crashme.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__AFL_FUZZ_INIT();

static volatile int sink;

static void check(const unsigned char *data, ssize_t len) {
  if (len < 4) return;
  if (data[0] == 'C') {
    sink++;
    if (data[1] == 'R') {
      sink++;
      if (data[2] == 'A') {
        sink++;
        if (data[3] == 'S') abort();
      }
    }
  }
}

int main(void) {
  __AFL_INIT();
  unsigned char *buf = __AFL_FUZZ_TESTCASE_BUF;
  while (__AFL_LOOP(10000)) {
    ssize_t len = __AFL_FUZZ_TESTCASE_LEN;
    check(buf, len);
  }
  return 0;
}
