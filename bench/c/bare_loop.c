// No fuzzer at all: calls LLVMFuzzerTestOneInput on the seed files (listed in argv[1]) round
// robin for argv[2] seconds, and prints how many calls it made: the harness's own speed.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  FILE *list = fopen(argv[1], "r");
  if (!list) return 2;
  static uint8_t *inputs[4096];
  static size_t sizes[4096];
  size_t count = 0;
  char path[4096];
  while (count < 4096 && fgets(path, sizeof path, list)) {
    path[strcspn(path, "\n")] = 0;
    FILE *f = fopen(path, "rb");
    if (!f) continue;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    inputs[count] = malloc(n > 0 ? n : 1);
    sizes[count] = fread(inputs[count], 1, n, f);
    fclose(f);
    count++;
  }
  if (!count) return 2;
  double secs = atof(argv[2]);
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  unsigned long long execs = 0;
  for (;;) {
    for (size_t i = 0; i < count; i++, execs++) LLVMFuzzerTestOneInput(inputs[i], sizes[i]);
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 >= secs) break;
  }
  printf("%llu\n", execs);
  return 0;
}
