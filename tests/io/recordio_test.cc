// RecordIO: files MXNet 1.9.1 wrote (scripts/make_mxnet_recordio_fixture.py) read back record
// by record, Cohort's writer producing the same bytes, and torn or foreign files refused with
// the file, the record and its byte offset.
#include "io/recordio.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "test_files.h"

namespace cohort {
namespace {

using testing::ScratchDir;

std::string Fixture(const std::string& name) {
  return std::string(COHORT_TEST_DATA_DIR) + "/recordio/" + name;
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

struct Record {
  ImageRecordHeader header;
  std::string payload;
};

// The records of scripts/make_mxnet_recordio_fixture.py, in its order.
std::vector<Record> FixtureRecords() {
  const std::string magic("\x0a\x23\xd7\xce", 4);
  std::string bytes;
  for (int i = 0; i < 1003; ++i) bytes.push_back(static_cast<char>((i * 37 + 11) % 256));
  auto make = [](float label, uint64_t id, uint64_t id2, std::vector<float> labels,
                 std::string payload) {
    Record r;
    r.header.label = label;
    r.header.id = id;
    r.header.id2 = id2;
    r.header.labels = std::move(labels);
    r.payload = std::move(payload);
    return r;
  };
  return {make(3.0f, 0, 0, {}, "hello"), make(0.0f, 1, 42, {1.5f, 2.5f, 7.0f}, "12345678"),
          make(1.0f, 2, 0, {}, magic + "abcd" + magic), make(0.0f, 3, 0, {}, ""),
          make(9.0f, 4, 7, {}, bytes)};
}

void ExpectRecord(const std::string& record, const Record& want, int i) {
  ImageRecordHeader h;
  const std::string_view payload = UnpackImageRecord(record, &h);
  EXPECT_EQ(payload, want.payload) << "record " << i;
  EXPECT_EQ(h.flag, want.header.labels.size()) << "record " << i;
  EXPECT_EQ(h.labels, want.header.labels) << "record " << i;
  if (want.header.labels.empty()) {
    EXPECT_EQ(h.label, want.header.label) << "record " << i;
  }
  EXPECT_EQ(h.id, want.header.id) << "record " << i;
  EXPECT_EQ(h.id2, want.header.id2) << "record " << i;
}

TEST(RecordIO, ReadsWhatMXNetWrote) {
  const std::vector<Record> want = FixtureRecords();
  RecordIOReader reader(Fixture("mxnet.rec"));
  std::string record;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(reader.Next(&record)) << "record " << i;
    ExpectRecord(record, want[i], static_cast<int>(i));
  }
  EXPECT_FALSE(reader.Next(&record));
  EXPECT_EQ(reader.Tell(), std::filesystem::file_size(Fixture("mxnet.rec")));
}

TEST(RecordIO, SeeksToIndexedRecords) {
  const std::vector<Record> want = FixtureRecords();
  const std::vector<RecordIndexEntry> index = ReadRecordIndex(Fixture("mxnet.idx"));
  ASSERT_EQ(index.size(), want.size());
  RecordIOReader reader(Fixture("mxnet.rec"));
  std::string record;
  for (int i : {4, 2, 0, 3, 1}) {  // any order
    EXPECT_EQ(index[i].key, i);
    reader.Seek(index[i].offset, i);
    ASSERT_TRUE(reader.Next(&record));
    ExpectRecord(record, want[i], i);
  }
}

// Written by Cohort, the same records are MXNet's bytes, record file and index alike: what one
// writes the other reads.
TEST(RecordIO, WritesMXNetsBytes) {
  ScratchDir dir;
  std::vector<RecordIndexEntry> index;
  {
    RecordIOWriter writer(dir.Path("c.rec"));
    int64_t key = 0;
    for (const Record& r : FixtureRecords()) {
      index.push_back({key++, writer.Write(PackImageRecord(r.header, r.payload))});
    }
    writer.Close();
  }
  EXPECT_EQ(testing::ReadFile(dir.Path("c.rec")), testing::ReadFile(Fixture("mxnet.rec")));
  EXPECT_EQ(FormatRecordIndex(index), testing::ReadFile(Fixture("mxnet.idx")));
}

TEST(RecordIO, RecordsHoldingTheMagicWordRoundTrip) {
  ScratchDir dir;
  const std::string magic("\x0a\x23\xd7\xce", 4);
  // At every alignment, at both ends, twice in a row, and alone.
  const std::vector<std::string> records = {
      magic, magic + magic, "a" + magic + "bcd", "abcd" + magic + "e", "ab" + magic, magic + "x",
      "",    "abc"};
  {
    RecordIOWriter writer(dir.Path("m.rec"));
    for (const std::string& r : records) writer.Write(r);
    writer.Close();
  }
  RecordIOReader reader(dir.Path("m.rec"));
  std::string got;
  for (const std::string& r : records) {
    ASSERT_TRUE(reader.Next(&got));
    EXPECT_EQ(got, r);
  }
  EXPECT_FALSE(reader.Next(&got));
}

TEST(RecordIO, UnclosedWriterLeavesNoFile) {
  ScratchDir dir;
  {
    RecordIOWriter writer(dir.Path("gone.rec"));
    writer.Write("abc");
  }
  EXPECT_FALSE(std::filesystem::exists(dir.Path("gone.rec")));
  EXPECT_TRUE(std::filesystem::is_empty(dir.Path("")));
}

// The message of the Error that `read` throws.
template <typename F>
std::string ErrorOf(F read) {
  try {
    read();
  } catch (const Error& e) {
    return e.message();
  }
  return "(no error)";
}

std::string ReadEveryRecord(const std::string& path) {
  return ErrorOf([&] {
    RecordIOReader reader(path);
    std::string r;
    while (reader.Next(&r)) {
    }
  });
}

TEST(RecordIO, TornAndForeignFilesNameTheRecordAndOffset) {
  ScratchDir dir;
  const std::string good = testing::ReadFile(Fixture("mxnet.rec"));
  // Cut inside record 4's data (it starts at byte 176).
  WriteAll(dir.Path("torn.rec"), good.substr(0, 500));
  std::string e = ReadEveryRecord(dir.Path("torn.rec"));
  EXPECT_NE(e.find("torn.rec': record 4 at byte 176"), std::string::npos) << e;
  EXPECT_NE(e.find("ends inside the record's data"), std::string::npos) << e;
  // Cut inside a part header.
  WriteAll(dir.Path("header.rec"), good.substr(0, 180));
  e = ReadEveryRecord(dir.Path("header.rec"));
  EXPECT_NE(e.find("record 4 at byte 176: the file ends inside a part header"), std::string::npos)
      << e;
  // Record 2 is three parts (92, 124, 136): without its last part the next record's header
  // follows a middle part.
  WriteAll(dir.Path("lost.rec"), good.substr(0, 136) + good.substr(144));
  e = ReadEveryRecord(dir.Path("lost.rec"));
  EXPECT_NE(e.find("record 2 at byte 92"), std::string::npos) << e;
  EXPECT_NE(e.find("last part is missing"), std::string::npos) << e;
  // Not a RecordIO file at all.
  WriteAll(dir.Path("text.rec"), "this is not a record file\n");
  e = ReadEveryRecord(dir.Path("text.rec"));
  EXPECT_NE(e.find("record 0 at byte 0: expected the RecordIO magic word"), std::string::npos) << e;
  // A wrong word where record 1 should begin.
  std::string bad = good;
  bad[40] = 'X';
  WriteAll(dir.Path("magic.rec"), bad);
  e = ReadEveryRecord(dir.Path("magic.rec"));
  EXPECT_NE(e.find("record 1 at byte 40: expected the RecordIO magic word"), std::string::npos)
      << e;
  e = ReadEveryRecord(dir.Path("missing.rec"));
  EXPECT_NE(e.find("missing.rec': cannot open"), std::string::npos) << e;
}

TEST(RecordIO, ShortImageRecordsAndBadIndexLinesAreErrors) {
  ImageRecordHeader h;
  EXPECT_NE(
      ErrorOf([&] { UnpackImageRecord("short", &h); }).find("shorter than its 24-byte header"),
      std::string::npos);
  std::string record = PackImageRecord({.labels = {1, 2, 3}}, "");
  record.resize(record.size() - 4);  // one label short
  EXPECT_NE(ErrorOf([&] { UnpackImageRecord(record, &h); }).find("says 3 labels (12 bytes)"),
            std::string::npos);
  ScratchDir dir;
  WriteAll(dir.Path("bad.idx"), "0\t0\n1\tforty\n");
  const std::string e = ErrorOf([&] { ReadRecordIndex(dir.Path("bad.idx")); });
  EXPECT_NE(e.find("bad.idx' line 2: expected 'key<TAB>offset'"), std::string::npos) << e;
}

}  // namespace
}  // namespace cohort
