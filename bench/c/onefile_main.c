// A plain main for AFL++'s fork-server mode: runs the input file named in argv[1] once.
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  static uint8_t buf[1 << 20];
  FILE *f = argc > 1 ? fopen(argv[1], "rb") : stdin;
  if (!f) return 1;
  size_t n = fread(buf, 1, sizeof buf, f);
  LLVMFuzzerTestOneInput(buf, n);
  return 0;
}
