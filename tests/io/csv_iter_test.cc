#include "io/csv_iter.h"

#include <gtest/gtest.h>

#include "test_files.h"

namespace cohort {
namespace {

using testing::ScratchDir;
using testing::WriteFile;

std::string ErrorOf(const std::string& path, const Shape& shape) {
  try {
    ReadCsvFile(path, shape);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// Options reading one value a sample from d.csv in `dir` and, unless `labels` is null, labels
// from l.csv: the files' texts given.
CSVIterOptions OneValueFiles(const ScratchDir& dir, const char* data, const char* labels) {
  WriteFile(dir.Path("d.csv"), data, false);
  CSVIterOptions o;
  o.data_csv = dir.Path("d.csv");
  o.data_shape = {1};
  if (labels) {
    WriteFile(dir.Path("l.csv"), labels, false);
    o.label_csv = dir.Path("l.csv");
  }
  return o;
}

TEST(CSVIter, ReadsDataAndLabels) {
  ScratchDir dir;
  WriteFile(dir.Path("d.csv"), "1,2,3,4\n5, 6 ,7,8\r\n\n-9.5,1e2,+3,0\n", false);
  WriteFile(dir.Path("l.csv"), "0\n1\n2", false);
  CSVIterOptions o;
  o.data_csv = dir.Path("d.csv");
  o.data_shape = {2, 2};
  o.label_csv = dir.Path("l.csv");
  o.batch = {.batch_size = 2};
  CSVIter it(o);
  EXPECT_EQ(it.provide_data()[0].shape, Shape({2, 2, 2}));
  EXPECT_EQ(it.provide_label()[0].shape, Shape({2}));
  ASSERT_TRUE(it.Next());
  EXPECT_EQ(it.Value().data[0].ToVector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(it.Value().label[0].ToVector<float>(), (std::vector<float>{0, 1}));
  ASSERT_TRUE(it.Next());
  EXPECT_EQ(it.Value().data[0].ToVector<float>()[0], -9.5f);
  EXPECT_EQ(it.Value().data[0].ToVector<float>()[1], 100.0f);
  EXPECT_EQ(it.Value().pad, 1);
  EXPECT_FALSE(it.Next());
}

// A bad label is named by its line as an editor shows it, blank lines counted.
TEST(CSVIter, LabelsAreNamedByTheirLine) {
  ScratchDir dir;
  const CSVIterOptions o = OneValueFiles(dir, "1\n2\n3\n", "0\n\n  \n1\n2\n");
  CSVIter iter(o);
  EXPECT_EQ(iter.DescribeLabelOf(0), "line 1 of '" + o.label_csv + "'");
  EXPECT_EQ(iter.DescribeLabelOf(2), "line 5 of '" + o.label_csv + "'");
}

TEST(CSVIter, LabelsDefaultToZero) {
  ScratchDir dir;
  CSVIterOptions o = OneValueFiles(dir, "1\n2\n", nullptr);
  o.batch = {.batch_size = 2};
  CSVIter it(o);
  ASSERT_TRUE(it.Next());
  EXPECT_EQ(it.Value().label[0].ToVector<float>(), (std::vector<float>{0, 0}));
}

TEST(CSVIter, ErrorsNameFileLineAndField) {
  ScratchDir dir;
  const std::string path = dir.Path("bad.csv");
  WriteFile(path, "1,2,3\n4,x5,6\n", false);
  EXPECT_NE(ErrorOf(path, {3}).find("'" + path + "': line 2, field 2: 'x5' is not a number"),
            std::string::npos)
      << ErrorOf(path, {3});
  WriteFile(path, "1,2,3\n\n4,5\n", false);
  EXPECT_NE(ErrorOf(path, {3}).find("line 3 has 2 values, expected 3"), std::string::npos)
      << ErrorOf(path, {3});
  WriteFile(path, "1,2,3,4\n", false);
  EXPECT_NE(ErrorOf(path, {3}).find("line 1 has 4 values, expected 3"), std::string::npos);
  EXPECT_EQ(ErrorOf(path, {3}).find("field == width"), std::string::npos);  // no check text
  WriteFile(path, "1,,3\n", false);
  EXPECT_NE(ErrorOf(path, {3}).find("field 2: '' is not a number"), std::string::npos);
  EXPECT_NE(ErrorOf(dir.Path("none.csv"), {3}).find("cannot open"), std::string::npos);
  WriteFile(path, "\n\n", false);
  EXPECT_NE(ErrorOf(path, {3}).find("holds no rows"), std::string::npos);
}

TEST(CSVIter, LabelRowCountMustMatch) {
  ScratchDir dir;
  const CSVIterOptions o = OneValueFiles(dir, "1\n2\n3\n", "1\n2\n");
  try {
    CSVIter it(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has 2 rows but"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cohort
