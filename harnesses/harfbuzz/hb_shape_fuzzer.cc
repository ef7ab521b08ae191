// HarfBuzz: the input is a font; shape a fixed text with it, then the input's last 64 bytes
// as UTF-32 text, in the manner of harfbuzz's own hb-shape-fuzzer (FuzzBench's
// harfbuzz_hb-shape-fuzzer).
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hb-ot.h"
#include "hb.h"

static void shape(hb_font_t *font, hb_buffer_t *buffer) {
  hb_buffer_guess_segment_properties(buffer);
  hb_shape(font, buffer, nullptr, 0);
  hb_buffer_destroy(buffer);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hb_blob_t *blob = hb_blob_create(reinterpret_cast<const char *>(data), size,
                                   HB_MEMORY_MODE_READONLY, nullptr, nullptr);
  hb_face_t *face = hb_face_create(blob, 0);
  hb_font_t *font = hb_font_create(face);
  hb_ot_font_set_funcs(font);
  hb_font_set_scale(font, 12, 12);

  hb_buffer_t *buffer = hb_buffer_create();
  hb_buffer_add_utf8(buffer, "ABCDEXYZ123@_%&)*$!", -1, 0, -1);
  shape(font, buffer);

  uint32_t text32[16] = {0};
  if (size > sizeof(text32)) {
    memcpy(text32, data + size - sizeof(text32), sizeof(text32));
    buffer = hb_buffer_create();
    hb_buffer_add_utf32(buffer, text32, sizeof(text32) / sizeof(text32[0]), 0, -1);
    shape(font, buffer);
  }

  hb_font_destroy(font);
  hb_face_destroy(face);
  hb_blob_destroy(blob);
  return 0;
}
