// Little CMS: an ICC profile from the input transformed to sRGB, as in FuzzBench's
// lcms_cms_transform_fuzzer (OSS-Fuzz's lcms project).
#include <stddef.h>
#include <stdint.h>

#include "lcms2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cmsHPROFILE source = cmsOpenProfileFromMem(data, (cmsUInt32Number)size);
  if (!source) return 0;
  cmsHPROFILE srgb = cmsCreate_sRGBProfile();
  if (!srgb) {
    cmsCloseProfile(source);
    return 0;
  }
  cmsColorSpaceSignature space = cmsGetColorSpace(source);
  cmsUInt32Number channels = cmsChannelsOf(space);
  // Lab comes as doubles, everything else as bytes.
  cmsUInt32Number format = space == cmsSigLabData
                               ? COLORSPACE_SH(PT_Lab) | CHANNELS_SH(channels) | BYTES_SH(0)
                               : COLORSPACE_SH(PT_ANY) | CHANNELS_SH(channels) | BYTES_SH(1);
  cmsHTRANSFORM transform = cmsCreateTransform(source, format, srgb, TYPE_BGR_8, 0, 0);
  cmsCloseProfile(source);
  cmsCloseProfile(srgb);
  if (!transform) return 0;
  uint8_t output[4];
  if (T_BYTES(format) == 0) {
    double input[16];
    for (cmsUInt32Number i = 0; i < channels && i < 16; i++) input[i] = 0.5;
    cmsDoTransform(transform, input, output, 1);
  } else {
    uint8_t input[16];
    for (cmsUInt32Number i = 0; i < channels && i < 16; i++) input[i] = 128;
    cmsDoTransform(transform, input, output, 1);
  }
  cmsDeleteTransform(transform);
  return 0;
}
