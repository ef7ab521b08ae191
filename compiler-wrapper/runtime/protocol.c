// protocol.c: the fork server protocol's messages, one 4-byte word each way: the fuzzer writes
// to us on FORKSRV_FD, we answer on FORKSRV_FD + 1 (the fork server, and a persistent child
// that answers the fuzzer itself, see answers.c).
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "lafuzz_runtime.h"

int lafuzz_write_u32(uint32_t v) { return write(FORKSRV_FD + 1, &v, 4) == 4 ? 0 : -1; }

// A signal handler's return (SA_RESTART aside) does not end the fuzzer's message.
int lafuzz_read_u32(uint32_t *v) {
  ssize_t got;
  while ((got = read(FORKSRV_FD, v, 4)) < 0 && errno == EINTR) {
  }
  return got == 4 ? 0 : -1;
}
