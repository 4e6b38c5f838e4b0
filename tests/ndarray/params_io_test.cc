// .params reading and writing: round trips, hand-written bytes of each array version, and every
// kind of damage a file can have.
#include "ndarray/params_io.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace cohort {
namespace {

// Little-endian bytes built field by field, as the MXNet writer lays them out.
struct Bytes {
  std::string data;
  template <typename T>
  Bytes& Put(T v) {
    data.append(reinterpret_cast<const char*>(&v), sizeof(v));
    return *this;
  }
  Bytes& U32(uint32_t v) { return Put(v); }
  Bytes& I32(int32_t v) { return Put(v); }
  Bytes& U64(uint64_t v) { return Put(v); }
  Bytes& I64(int64_t v) { return Put(v); }
  Bytes& F32(float v) { return Put(v); }
  Bytes& Str(const std::string& s) {
    U64(s.size());
    data += s;
    return *this;
  }
};

std::string ErrorOf(std::string_view bytes) {
  try {
    ParseParams(bytes, "test.params");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// One named float32 (2,) V2 array: {1.5, -2}, name "arg:w".
Bytes OneArrayV2() {
  Bytes b;
  b.U64(0x112).U64(0).U64(1);
  b.U32(0xF993FAC9).I32(0).I32(1).I64(2).I32(1).I32(0).I32(0).F32(1.5f).F32(-2.0f);
  b.U64(1).Str("arg:w");
  return b;
}

TEST(ParamsFormat, HandWrittenV2) {
  ParamsFile f = ParseParams(OneArrayV2().data, "v2");
  ASSERT_EQ(f.arrays.size(), 1u);
  EXPECT_EQ(f.names, std::vector<std::string>{"arg:w"});
  EXPECT_EQ(f.arrays[0].shape(), Shape({2}));
  EXPECT_EQ(f.arrays[0].ToVector<float>(), (std::vector<float>{1.5f, -2.0f}));
}

TEST(ParamsFormat, HandWrittenV3WithScalarAndNone) {
  Bytes b;
  b.U64(0x112).U64(0).U64(3);
  b.U32(0xF993FACA).I32(0).I32(0).I32(1).I32(0).I32(6).I64(-9);        // int64 scalar
  b.U32(0xF993FACA).I32(-1).I32(-1);                                   // none
  b.U32(0xF993FACA).I32(0).I32(2).I64(1).I64(0).I32(2).I32(3).I32(1);  // float64 (1,0) from gpu
  b.U64(0);
  ParamsFile f = ParseParams(b.data, "v3");
  ASSERT_EQ(f.arrays.size(), 3u);
  EXPECT_TRUE(f.names.empty());
  EXPECT_EQ(f.arrays[0].shape(), Shape());
  EXPECT_EQ(f.arrays[0].ToVector<int64_t>(), std::vector<int64_t>{-9});
  EXPECT_TRUE(f.arrays[1].is_none());
  EXPECT_EQ(f.arrays[2].shape(), Shape({1, 0}));
  EXPECT_EQ(f.arrays[2].dtype(), DType::kFloat64);
  EXPECT_EQ(f.arrays[2].ctx(), Context::CPU());  // loaded arrays live on the CPU
}

TEST(ParamsFormat, HandWrittenV1AndPreV1) {
  Bytes b;
  b.U64(0x112).U64(0).U64(3);
  b.U32(0xF993FAC8).I32(2).I64(1).I64(2).I32(1).I32(0).I32(4).I32(7).I32(-8);  // V1 int32 (1,2)
  b.U32(2).U32(2).U32(1).I32(1).I32(0).I32(0).F32(0.25f).F32(4.0f);            // pre-V1: ndim 2
  b.U32(0);                                                                    // pre-V1 none
  b.U64(3).Str("v1").Str("legacy").Str("none");
  ParamsFile f = ParseParams(b.data, "v1");
  ASSERT_EQ(f.arrays.size(), 3u);
  EXPECT_EQ(f.arrays[0].dtype(), DType::kInt32);
  EXPECT_EQ(f.arrays[0].ToVector<int32_t>(), (std::vector<int32_t>{7, -8}));
  EXPECT_EQ(f.arrays[1].shape(), Shape({2, 1}));
  EXPECT_EQ(f.arrays[1].ToVector<float>(), (std::vector<float>{0.25f, 4.0f}));
  EXPECT_TRUE(f.arrays[2].is_none());
  EXPECT_EQ(f.names[1], "legacy");
}

TEST(ParamsFormat, WriterProducesTheHandWrittenBytes) {
  ParamsFile f;
  f.names = {"arg:w"};
  f.arrays = {NDArray::FromVector<float>({2}, std::vector<float>{1.5f, -2.0f})};
  EXPECT_EQ(SerializeParams(f), OneArrayV2().data);
}

TEST(ParamsFormat, RoundTripsEveryDType) {
  ParamsFile f;
  for (int flag : {0, 1, 2, 3, 4, 5, 6, 7, 12}) {
    DType d = *DTypeFromFlag(flag);
    f.names.push_back(std::string(DTypeName(d)));
    f.arrays.push_back(NDArray::FromVector<double>({3, 1}, std::vector<double>{1, 0, 3}).AsType(d));
  }
  for (ParamsFormat format : {ParamsFormat::kV2, ParamsFormat::kV3}) {
    ParamsFile back = ParseParams(SerializeParams(f, format), "round trip");
    ASSERT_EQ(back.names, f.names);
    for (size_t i = 0; i < f.arrays.size(); ++i) {
      EXPECT_EQ(back.arrays[i].dtype(), f.arrays[i].dtype());
      EXPECT_EQ(back.arrays[i].shape(), f.arrays[i].shape());
      EXPECT_EQ(
          std::memcmp(back.arrays[i].raw_data(), f.arrays[i].raw_data(), f.arrays[i].nbytes()), 0)
          << f.names[i];
    }
  }
}

TEST(ParamsFormat, ScalarsNeedV3AndAutoPicksIt) {
  ParamsFile f;
  f.arrays = {NDArray::Full(Shape(), 2.0), NDArray()};
  EXPECT_THROW(SerializeParams(f, ParamsFormat::kV2), Error);
  std::string bytes = SerializeParams(f);
  uint32_t magic;
  std::memcpy(&magic, bytes.data() + 24, 4);
  EXPECT_EQ(magic, 0xF993FACAu);
  ParamsFile back = ParseParams(bytes, "auto");
  EXPECT_EQ(back.arrays[0].ToVector<float>(), std::vector<float>{2.0f});
  EXPECT_TRUE(back.arrays[1].is_none());
}

TEST(ParamsFormat, SlicesSaveOnlyTheirRows) {
  NDArray a = NDArray::FromVector<int32_t>({3, 2}, std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  ParamsFile f;
  f.arrays = {a.Slice(1, 3)};
  EXPECT_EQ(ParseParams(SerializeParams(f), "slice").arrays[0].ToVector<int32_t>(),
            (std::vector<int32_t>{3, 4, 5, 6}));
}

TEST(ParamsFormat, TruncationAtEveryByteIsAnErrorNamingTheField) {
  Bytes b;  // two arrays, so truncation inside the second names index 1
  b.U64(0x112).U64(0).U64(2);
  b.U32(0xF993FAC9).I32(0).I32(1).I64(1).I32(1).I32(0).I32(0).F32(1.0f);
  b.U32(0xF993FAC9).I32(0).I32(1).I64(2).I32(1).I32(0).I32(0).F32(2.0f).F32(3.0f);
  b.U64(2).Str("a").Str("bb");
  ASSERT_NO_THROW(ParseParams(b.data, "full"));
  const size_t second_array = 24 + 36;
  for (size_t n = 0; n < b.data.size(); ++n) {
    std::string what = ErrorOf(std::string_view(b.data).substr(0, n));
    EXPECT_NE(what.find("'test.params': "), std::string::npos) << n << ": " << what;
    EXPECT_NE(what.find("file ends inside the"), std::string::npos) << n << ": " << what;
    if (n >= second_array && n < second_array + 40) {
      EXPECT_NE(what.find("array 1: "), std::string::npos) << n << ": " << what;
    }
  }
  // The field names, at the start of each header field of the second array.
  const std::pair<size_t, const char*> fields[] = {{0, "list header"},
                                                   {8, "reserved field"},
                                                   {16, "array count"},
                                                   {second_array, "array magic"},
                                                   {second_array + 4, "storage type"},
                                                   {second_array + 8, "ndim"},
                                                   {second_array + 12, "shape"},
                                                   {second_array + 20, "context"},
                                                   {second_array + 28, "type flag"},
                                                   {second_array + 32, "data"},
                                                   {second_array + 40, "name count"},
                                                   {second_array + 48, "name length"},
                                                   {second_array + 56, "name"}};
  for (auto [offset, field] : fields) {
    std::string what = ErrorOf(std::string_view(b.data).substr(0, offset));
    EXPECT_NE(what.find(std::string("inside the ") + field), std::string::npos)
        << offset << ": " << what;
  }
}

TEST(ParamsFormat, CorruptFieldsAreNamed) {
  auto corrupt = [](size_t offset, auto value) {
    std::string bytes = OneArrayV2().data;
    std::memcpy(bytes.data() + offset, &value, sizeof(value));
    return ErrorOf(bytes);
  };
  EXPECT_NE(corrupt(0, uint64_t{0x113}).find("not an MXNet NDArray file"), std::string::npos);
  EXPECT_NE(corrupt(24, uint32_t{0xDEADBEEF}).find("array 0: unknown array magic 0xdeadbeef"),
            std::string::npos);
  EXPECT_NE(corrupt(28, int32_t{2}).find("(csr) is not supported"), std::string::npos);
  EXPECT_NE(corrupt(32, int32_t{77}).find("ndim 77 is out of range"), std::string::npos);
  EXPECT_NE(corrupt(36, int64_t{-5}).find("negative dimension"), std::string::npos);
  EXPECT_NE(corrupt(44, int32_t{9}).find("unknown device type 9"), std::string::npos);
  EXPECT_NE(corrupt(52, int32_t{42}).find("unknown type flag 42"), std::string::npos);
  EXPECT_NE(corrupt(64, uint64_t{3}).find("3 names for 1 arrays"), std::string::npos);
  EXPECT_NE(OneArrayV2().U32(0).data.size(), 0u);
  EXPECT_NE(ErrorOf(OneArrayV2().U32(0).data).find("unexpected bytes after the names"),
            std::string::npos);
}

TEST(ParamsFormat, HugeSizesFailBeforeAllocating) {
  // Counts and dims that would ask for exabytes must be refused by comparison with the file size.
  Bytes count;
  count.U64(0x112).U64(0).U64(uint64_t{1} << 60);
  EXPECT_NE(ErrorOf(count.data).find("1152921504606846976 arrays need at least 4 bytes each"),
            std::string::npos);
  Bytes dims;
  dims.U64(0x112).U64(0).U64(1);
  dims.U32(0xF993FAC9).I32(0).I32(3).I64(1 << 20).I64(1 << 20).I64(1 << 20).I32(1).I32(0).I32(0);
  EXPECT_NE(ErrorOf(dims.data).find("file ends inside the data of a float32 array of shape "
                                    "(1048576,1048576,1048576)"),
            std::string::npos)
      << ErrorOf(dims.data);
  Bytes overflow = dims;
  std::memcpy(overflow.data.data() + 36, "\xff\xff\xff\xff\xff\xff\xff\x3f", 8);
  EXPECT_NE(ErrorOf(overflow.data).find("is too large"), std::string::npos)
      << ErrorOf(overflow.data);
  Bytes name = OneArrayV2();
  name.data.resize(name.data.size() - 5 - 8);
  name.U64(uint64_t{1} << 62);
  EXPECT_NE(ErrorOf(name.data).find("inside the name (needs 4611686018427387904 bytes"),
            std::string::npos);
}

class ParamsFileTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) { return scratch_.Path(name); }
  testing::ScratchDir scratch_;
  const std::filesystem::path& dir_ = scratch_.dir();
};

TEST_F(ParamsFileTest, SaveAndLoadANamedMap) {
  std::map<std::string, NDArray> params = {
      {"arg:fc1_weight", NDArray::Full({2, 2}, 0.5)},
      {"aux:bn_moving_var", NDArray::Full({3}, 1, DType::kFloat64)}};
  SaveParams(Path("m.params"), params);
  std::map<std::string, NDArray> back = LoadParams(Path("m.params"));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back["arg:fc1_weight"].ToVector<float>(), std::vector<float>(4, 0.5f));
  EXPECT_EQ(back["aux:bn_moving_var"].dtype(), DType::kFloat64);
}

TEST_F(ParamsFileTest, LoadErrorsNameTheFile) {
  try {
    LoadParams(Path("missing.params"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.params"), std::string::npos);
  }
  ParamsFile unnamed;
  unnamed.arrays = {NDArray::Zeros({1})};
  SaveParamsFile(Path("list.params"), unnamed);
  EXPECT_THROW(LoadParams(Path("list.params")), Error);  // a map needs names
  ParamsFile dup;
  dup.names = {"a", "a"};
  dup.arrays = {NDArray::Zeros({1}), NDArray::Zeros({1})};
  SaveParamsFile(Path("dup.params"), dup);
  try {
    LoadParams(Path("dup.params"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("array 1: name 'a' appears twice"), std::string::npos);
  }
  EXPECT_THROW(LoadParamsFile(dir_.string()), Error);  // a directory
}

TEST_F(ParamsFileTest, FailedSaveKeepsTheOldFile) {
  SaveParams(Path("ckpt.params"), {{"arg:w", NDArray::Full({1}, 1.0)}});
  ParamsFile bad;
  bad.arrays = {NDArray::Full(Shape(), 1.0)};
  EXPECT_THROW(SaveParamsFile(Path("ckpt.params"), bad, ParamsFormat::kV2), Error);
  EXPECT_EQ(LoadParams(Path("ckpt.params"))["arg:w"].ToVector<float>(), std::vector<float>{1.0f});
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_),
                          std::filesystem::directory_iterator()),
            1);
}

}  // namespace
}  // namespace cohort
