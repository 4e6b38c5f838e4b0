// im2rec's list and packing: images come back from ImageRecordIter pixel for pixel (PNG) with
// their folder's label, pass-through keeps a file's bytes, lists round-trip and bad lines are
// named.
#include "io/im2rec.h"

#include <gtest/gtest.h>

#include <fstream>

#include "io/image_codec.h"
#include "io/image_record_iter.h"
#include "io/recordio.h"
#include "tests/test_util.h"

namespace cohort {
namespace {

Image Pattern(int width, int height, int seed) {
  Image img{width, height, 3, {}};
  for (int i = 0; i < width * height * 3; ++i) {
    img.pixels.push_back(static_cast<uint8_t>((i * 37 + seed * 101) % 256));
  }
  return img;
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(Im2Rec, RecursiveListLabelsFoldersAsIm2recPyWalksThem) {
  // os.walk order: root's own images first (label 0), empty folders take no label, and a nested
  // folder is a class of its own.
  testing::ScratchDir dir;
  const std::string root = dir.Path("images");
  const std::string png = EncodePng(Pattern(2, 2, 0));
  for (const char* f : {"a.png", "c/x.png", "c/sub/y.png", "d/z.jpg", "d/notes.txt"}) {
    WriteBytes(root + "/" + f, png);
  }
  std::filesystem::create_directories(root + "/b");
  std::vector<std::string> classes;
  const auto entries = ListImages(root, /*recursive=*/true, /*shuffle=*/false, 100, &classes);
  EXPECT_EQ(classes, (std::vector<std::string>{".", "c", "c/sub", "d"}));
  ASSERT_EQ(entries.size(), 4u);
  const std::vector<std::string> paths = {"a.png", "c/x.png", "c/sub/y.png", "d/z.jpg"};
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i].path, paths[i]);
    EXPECT_EQ(entries[i].labels, std::vector<float>{static_cast<float>(i)}) << entries[i].path;
  }
  // Without --recursive: root's images only, label 0.
  const auto flat = ListImages(root, /*recursive=*/false, /*shuffle=*/false, 100);
  ASSERT_EQ(flat.size(), 1u);
  EXPECT_EQ(flat[0].path, "a.png");
}

TEST(Im2Rec, PackedPngsComeBackExactlyWithTheirFoldersLabels) {
  testing::ScratchDir dir;
  const std::string root = dir.Path("images");
  for (int i = 0; i < 3; ++i) {
    WriteBytes(root + "/cat/" + std::to_string(i) + ".png", EncodePng(Pattern(6, 5, i)));
    WriteBytes(root + "/dog/" + std::to_string(i) + ".png", EncodePng(Pattern(6, 5, 10 + i)));
  }
  const auto entries = ListImages(root, /*recursive=*/true, /*shuffle=*/true, 100);
  ASSERT_EQ(entries.size(), 6u);
  WriteImageList(dir.Path("set.lst"), entries);
  const auto read = ReadImageList(dir.Path("set.lst"));
  ASSERT_EQ(read.size(), 6u);
  for (size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].index, static_cast<int64_t>(i));
    EXPECT_EQ(read[i].path, entries[i].path);
    EXPECT_EQ(read[i].labels, entries[i].labels);
    EXPECT_EQ(read[i].labels[0], read[i].path.rfind("cat/", 0) == 0 ? 0.0f : 1.0f) << read[i].path;
  }
  PackOptions o;
  o.encoding = ".png";
  o.num_threads = 2;
  const PackResult r = PackImages(read, root, dir.Path("set"), o);
  EXPECT_EQ(r.packed, 6);
  EXPECT_TRUE(r.skipped.empty());

  ImageRecordIterOptions io;
  io.path_imgrec = dir.Path("set.rec");
  io.path_imgidx = dir.Path("set.idx");
  io.data_shape = {3, 5, 6};
  io.batch_size = 6;
  ImageRecordIter it(io);
  ASSERT_TRUE(it.Next());
  const std::vector<float> data = it.Value().data[0].ToVector<float>();
  const std::vector<float> labels = it.Value().label[0].ToVector<float>();
  for (int s = 0; s < 6; ++s) {
    const std::string& path = read[s].path;
    const int seed = std::stoi(path.substr(4, 1)) + (path[0] == 'd' ? 10 : 0);
    const Image want = Pattern(6, 5, seed);
    EXPECT_EQ(labels[s], read[s].labels[0]);
    for (int c = 0; c < 3; ++c) {
      for (int y = 0; y < 5; ++y) {
        for (int x = 0; x < 6; ++x) {
          ASSERT_EQ(data[((s * 3 + c) * 5 + y) * 6 + x], want.at(y, x, c))
              << path << " c" << c << " y" << y << " x" << x;
        }
      }
    }
  }
}

TEST(Im2Rec, PassThroughKeepsTheFilesBytesAndResizeTheShorterSide) {
  testing::ScratchDir dir;
  const std::string root = dir.Path("images");
  const std::string png = EncodePng(Pattern(8, 4, 1));
  WriteBytes(root + "/a.png", png);
  const std::vector<ImageListEntry> entries = {{7, {2.0f, 3.0f}, "a.png"}};
  PackOptions o;
  o.pass_through = true;
  o.pack_label = true;
  PackImages(entries, root, dir.Path("raw"), o);
  RecordIOReader reader(dir.Path("raw.rec"));
  std::string record;
  ASSERT_TRUE(reader.Next(&record));
  ImageRecordHeader header;
  EXPECT_EQ(UnpackImageRecord(record, &header), png);
  EXPECT_EQ(header.id, 7u);
  EXPECT_EQ(header.labels, (std::vector<float>{2.0f, 3.0f}));
  EXPECT_EQ(ReadRecordIndex(dir.Path("raw.idx")).at(0).key, 7);
  // Without --pack-label the first label alone, as im2rec.py's IRHeader(0, item[2], ...).
  o.pack_label = false;
  PackImages(entries, root, dir.Path("first"), o);
  RecordIOReader first(dir.Path("first.rec"));
  ASSERT_TRUE(first.Next(&record));
  UnpackImageRecord(record, &header);
  EXPECT_EQ(header.flag, 0u);
  EXPECT_EQ(header.label, 2.0f);

  o.pass_through = false;
  o.resize = 6;  // 8x4 -> 12x6
  PackImages(entries, root, dir.Path("resized"), o);
  RecordIOReader resized(dir.Path("resized.rec"));
  ASSERT_TRUE(resized.Next(&record));
  Image img;
  DecodeImage(UnpackImageRecord(record, &header), 3, &img);
  EXPECT_EQ(img.width, 12);
  EXPECT_EQ(img.height, 6);
}

// im2rec.py's make_list: chunk_size = ceil(N / chunks); in each chunk the first
// test_ratio * chunk_size entries are _test, the next train_ratio * chunk_size _train, the rest
// _val (Python slices: the last chunk may be short).
TEST(Im2Rec, SplitsAsMakeList) {
  std::vector<ImageListEntry> entries;
  for (int i = 0; i < 10; ++i) entries.push_back({i, {0.0f}, std::to_string(i) + ".png"});
  auto indices = [](const std::vector<ImageListEntry>& part) {
    std::vector<int64_t> out;
    for (const ImageListEntry& e : part) out.push_back(e.index);
    return out;
  };
  const auto whole = SplitImageList(entries, 1, 1.0, 0.0);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].first, "");
  EXPECT_EQ(whole[0].second.size(), 10u);
  const auto three = SplitImageList(entries, 1, 0.6, 0.2);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[0].first, "_test");
  EXPECT_EQ(indices(three[0].second), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(three[1].first, "_val");
  EXPECT_EQ(indices(three[1].second), (std::vector<int64_t>{8, 9}));
  EXPECT_EQ(three[2].first, "_train");
  EXPECT_EQ(indices(three[2].second), (std::vector<int64_t>{2, 3, 4, 5, 6, 7}));
  const auto chunked = SplitImageList(entries, 3, 0.5, 0.0);  // chunks of 4, 4, 2
  ASSERT_EQ(chunked.size(), 6u);
  EXPECT_EQ(chunked[0].first, "_0_val");
  EXPECT_EQ(indices(chunked[0].second), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(chunked[1].first, "_0_train");
  EXPECT_EQ(indices(chunked[1].second), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(chunked[4].first, "_2_val");
  EXPECT_TRUE(chunked[4].second.empty());
  EXPECT_EQ(indices(chunked[5].second), (std::vector<int64_t>{8, 9}));
  EXPECT_THROW(SplitImageList(entries, 1, 0.8, 0.3), ConfigError);
  EXPECT_THROW(SplitImageList(entries, 0, 1.0, 0.0), ConfigError);
}

// A validation folder missing a class keeps the training numbering through the class map; a
// folder the map lacks is an error naming it. --exts chooses the files listed.
TEST(Im2Rec, ClassMapKeepsTheNumberingOfAnotherSplit) {
  testing::ScratchDir dir;
  const std::string png = EncodePng(Pattern(2, 2, 0));
  for (const char* f : {"train/ant/1.png", "train/bee/1.png", "train/cat/1.png", "val/ant/2.png",
                        "val/cat/2.png", "val/cat/3.PNG", "other/dog/1.png"}) {
    WriteBytes(dir.Path(f), png);
  }
  std::vector<std::string> classes;
  ListImages(dir.Path("train"), true, false, 100, &classes);
  EXPECT_EQ(classes, (std::vector<std::string>{"ant", "bee", "cat"}));
  WriteClassMap(dir.Path("train.classes"), classes);
  const std::vector<std::string> map = ReadClassMap(dir.Path("train.classes"));
  EXPECT_EQ(map, classes);
  std::vector<std::string> val_classes;
  const auto val =
      ListImages(dir.Path("val"), true, false, 100, &val_classes, kDefaultImageExts, &map);
  ASSERT_EQ(val.size(), 3u);
  EXPECT_EQ(val[0].labels, std::vector<float>{0.0f});  // ant
  EXPECT_EQ(val[1].labels, std::vector<float>{2.0f});  // cat, 1 without the map
  EXPECT_EQ(val_classes, map);
  const auto only_lower = ListImages(dir.Path("val"), true, false, 100, nullptr, {".png"}, &map);
  EXPECT_EQ(only_lower.size(), 3u);  // extensions compare without case, as the default's do
  const auto jpegs = [&] { ListImages(dir.Path("val"), true, false, 100, nullptr, {".jpg"}); };
  EXPECT_THROW(jpegs(), Error);
  try {
    ListImages(dir.Path("other"), true, false, 100, nullptr, kDefaultImageExts, &map);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("class folder 'dog'"), std::string::npos) << e.what();
  }
  std::ofstream(dir.Path("bad.classes")) << "0\tant\n2\tcat\n";
  EXPECT_THROW(ReadClassMap(dir.Path("bad.classes")), ConfigError);
}

// --center-crop packs the centered square (margins rounded down) before any resize.
TEST(Im2Rec, CenterCropPacksTheCenteredSquare) {
  testing::ScratchDir dir;
  const Image wide = Pattern(7, 4, 3);
  WriteBytes(dir.Path("images/w.png"), EncodePng(wide));
  PackOptions o;
  o.center_crop = true;
  o.encoding = ".png";
  PackImages({{0, {1.0f}, "w.png"}}, dir.Path("images"), dir.Path("crop"), o);
  RecordIOReader reader(dir.Path("crop.rec"));
  std::string record;
  ASSERT_TRUE(reader.Next(&record));
  ImageRecordHeader header;
  Image img;
  DecodeImage(UnpackImageRecord(record, &header), 3, &img);
  ASSERT_EQ(img.width, 4);
  ASSERT_EQ(img.height, 4);
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 4; ++x) {
      for (int c = 0; c < 3; ++c) ASSERT_EQ(img.at(y, x, c), wide.at(y, x + 1, c));  // (7-4)/2
    }
  }
}

TEST(Im2Rec, UndecodableImagesAreSkippedAndNamed) {
  testing::ScratchDir dir;
  const std::string root = dir.Path("images");
  WriteBytes(root + "/good.png", EncodePng(Pattern(4, 4, 0)));
  WriteBytes(root + "/bad.png", "not a png");
  const auto entries = ListImages(root, false, false, 0);
  ASSERT_EQ(entries.size(), 2u);
  const PackResult r = PackImages(entries, root, dir.Path("set"), PackOptions{});
  EXPECT_EQ(r.packed, 1);
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0].rfind("bad.png: ", 0), 0u) << r.skipped[0];
  EXPECT_EQ(ReadRecordIndex(dir.Path("set.idx")).size(), 1u);
}

// A file the list names that cannot be read is skipped and named too (it stopped the whole pack);
// a list none of whose files can be packed is an error, not an empty data set.
TEST(Im2Rec, UnreadableListedFilesAreSkippedUnlessAllAre) {
  testing::ScratchDir dir;
  const std::string root = dir.Path("images");
  WriteBytes(root + "/good.png", EncodePng(Pattern(4, 4, 0)));
  const std::vector<ImageListEntry> entries = {{0, {1.0f}, "gone.png"}, {1, {1.0f}, "good.png"}};
  const PackResult r = PackImages(entries, root, dir.Path("set"), PackOptions{});
  EXPECT_EQ(r.packed, 1);
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0], "gone.png: im2rec: cannot read image '" + root + "/gone.png'");
  const std::string m = testing::ErrorOf(
      [&] { PackImages({entries[0]}, root, dir.Path("none"), PackOptions{}); });
  EXPECT_NE(m.find("none of the 1 images listed could be packed"), std::string::npos) << m;
}

TEST(Im2Rec, MalformedListLineIsNamed) {
  testing::ScratchDir dir;
  std::ofstream(dir.Path("bad.lst")) << "0\t1.000000\ta.jpg\nx\t1\tb.jpg\n";
  try {
    ReadImageList(dir.Path("bad.lst"));
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.lst' line 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ListImages(dir.Path("nowhere"), true, false, 0), Error);
}

}  // namespace
}  // namespace cohort
