// libFuzzer target: JPEG and PNG bytes decoded to RGB and to gray.
#include "io/image_codec.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cohort::Image image;
  for (int channels : {3, 1}) {
    try {
      cohort::DecodeImage(cohort::fuzz::AsString(data, size), channels, &image);
    } catch (const cohort::Error&) {
    }
  }
  return 0;
}
