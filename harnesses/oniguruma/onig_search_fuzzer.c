// Oniguruma: the input's first byte chooses the encoding, the rest is a pattern in Ruby's
// syntax; a pattern that compiles is searched for in a fixed text, in the manner of
// Oniguruma's own fuzzing harnesses. (Searching the pattern in itself as well made one bug,
// ONIG-5, crash on most inputs, which hid the others from every fuzzer.)
#include <stddef.h>
#include <stdint.h>

#include "oniguruma.h"

static OnigEncoding encodings[] = {
    ONIG_ENCODING_UTF8,     ONIG_ENCODING_EUC_JP,   ONIG_ENCODING_SJIS,
    ONIG_ENCODING_ASCII,    ONIG_ENCODING_UTF16_LE, ONIG_ENCODING_ISO_8859_1,
};
#define ENCODINGS (sizeof(encodings) / sizeof(encodings[0]))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int initialized;
  if (!initialized) {
    onig_initialize(encodings, ENCODINGS);
    initialized = 1;
  }
  if (size < 1) return 0;
  const UChar *pattern = data + 1, *end = data + size;
  regex_t *reg;
  OnigErrorInfo error;
  if (onig_new(&reg, pattern, end, ONIG_OPTION_NONE, encodings[data[0] % ENCODINGS],
               ONIG_SYNTAX_RUBY, &error) != ONIG_NORMAL)
    return 0;
  static const UChar text[] = "a\xe3\x81\x82zZ09 _-\n\xa4\xa2xyzABC";
  OnigRegion *region = onig_region_new();
  const UChar *text_end = text + sizeof(text) - 1;
  onig_search(reg, text, text_end, text, text_end, region, ONIG_OPTION_NONE);
  onig_region_free(region, 1);
  onig_free(reg);
  return 0;
}
