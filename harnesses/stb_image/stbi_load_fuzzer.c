// stb_image: the input is an image file in any format it reads (PNG, JPEG, GIF, BMP, PSD,
// TGA, HDR, PIC, PNM), decoded to RGBA, in the manner of stb's own stbi_read_fuzzer.
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define STB_IMAGE_IMPLEMENTATION
#include "stb_image.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int x, y, channels;
  free(stbi_load_from_memory(data, (int)size, &x, &y, &channels, 4));
  return 0;
}
