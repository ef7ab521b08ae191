// Expat: the input is an XML document, parsed in one piece with namespaces and external
// parameter entities on, every handler a no-op, in the manner of Expat's own
// xml_parse_fuzzer.
#include <stddef.h>
#include <stdint.h>

#include "expat.h"

static void XMLCALL start(void *data, const XML_Char *name, const XML_Char **attributes) {
  (void)data, (void)name, (void)attributes;
}
static void XMLCALL end(void *data, const XML_Char *name) { (void)data, (void)name; }
static void XMLCALL text(void *data, const XML_Char *s, int len) { (void)data, (void)s, (void)len; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  XML_Parser parser = XML_ParserCreateNS(NULL, '!');
  if (!parser) return 0;
  XML_SetElementHandler(parser, start, end);
  XML_SetCharacterDataHandler(parser, text);
  XML_SetParamEntityParsing(parser, XML_PARAM_ENTITY_PARSING_ALWAYS);
  XML_Parse(parser, (const char *)data, (int)size, 1);
  XML_ParserFree(parser);
  return 0;
}
