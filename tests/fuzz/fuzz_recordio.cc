// libFuzzer target: RecordIO files, every record read and unpacked as an image record.
#include "io/recordio.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = cohort::fuzz::AsFile(data, size, ".rec");
  try {
    cohort::RecordIOReader reader(path);
    std::string record;
    while (reader.Next(&record)) {
      cohort::ImageRecordHeader header;
      try {
        cohort::UnpackImageRecord(record, &header);
      } catch (const cohort::Error&) {
      }
    }
  } catch (const cohort::Error&) {
  }
  return 0;
}
