// Coverage replay driver: runs LLVMFuzzerTestOneInput on every file listed (one path per line)
// in argv[1], in one process, then writes the coverage profile. A crash still writes it.
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int __llvm_profile_write_file(void);

static void on_crash(int sig) {
  __llvm_profile_write_file();
  _exit(128 + sig);
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  signal(SIGSEGV, on_crash);
  signal(SIGABRT, on_crash);
  signal(SIGBUS, on_crash);
  signal(SIGFPE, on_crash);
  FILE *list = fopen(argv[1], "r");
  if (!list) return 2;
  char path[4096];
  static uint8_t buf[1 << 20];
  while (fgets(path, sizeof path, list)) {
    path[strcspn(path, "\n")] = 0;
    FILE *f = fopen(path, "rb");
    if (!f) continue;
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
  }
  return 0;
}
