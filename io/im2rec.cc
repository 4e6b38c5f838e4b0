// Image lists and packing, as MXNet's tools/im2rec.py (io/im2rec.h).
#include "io/im2rec.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/thread_arena.h"
#include "io/image_codec.h"
#include "io/recordio.h"

namespace cohort {
namespace fs = std::filesystem;
namespace {

bool IsImage(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

std::vector<fs::path> ImagesIn(const fs::path& dir, bool recursive) {
  std::vector<fs::path> out;
  auto take = [&](const fs::directory_entry& e) {
    if (e.is_regular_file() && IsImage(e.path())) out.push_back(e.path());
  };
  if (recursive) {
    for (const auto& e : fs::recursive_directory_iterator(dir)) take(e);
  } else {
    for (const auto& e : fs::directory_iterator(dir)) take(e);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) COHORT_THROW() << "im2rec: cannot read image '" << path << "'";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// One entry's record: its header and the image `bytes`, re-encoded unless pass_through.
std::string PackOne(const ImageListEntry& e, std::string bytes, const PackOptions& o) {
  if (!o.pass_through) {
    Image image, resized;
    DecodeImage(bytes, o.color == 0 ? 1 : 3, &image);
    const Image* out = &image;
    if (o.resize > 0) {
      ResizeShorterSide(image, o.resize, &resized);
      out = &resized;
    }
    bytes = o.encoding == ".png" ? EncodePng(*out) : EncodeJpeg(*out, o.quality);
  }
  ImageRecordHeader header;
  header.id = static_cast<uint64_t>(e.index);
  if (e.labels.size() == 1) {
    header.label = e.labels[0];
  } else {
    header.labels = e.labels;
    header.flag = static_cast<uint32_t>(e.labels.size());
  }
  return PackImageRecord(header, bytes);
}

}  // namespace

std::vector<ImageListEntry> ListImages(const std::string& root, bool recursive, bool shuffle,
                                       uint64_t seed) {
  COHORT_CHECK(fs::is_directory(root)) << "im2rec: '" << root << "' is not a folder";
  std::vector<ImageListEntry> entries;
  auto add = [&](const fs::path& file, float label) {
    entries.push_back({0, {label}, fs::relative(file, root).generic_string()});
  };
  if (recursive) {
    std::vector<fs::path> classes;
    for (const auto& e : fs::directory_iterator(root)) {
      if (e.is_directory()) classes.push_back(e.path());
    }
    std::sort(classes.begin(), classes.end());
    for (size_t c = 0; c < classes.size(); ++c) {
      for (const fs::path& f : ImagesIn(classes[c], true)) add(f, static_cast<float>(c));
    }
  } else {
    for (const fs::path& f : ImagesIn(root, false)) add(f, 0.0f);
  }
  COHORT_CHECK(!entries.empty()) << "im2rec: no .jpg, .jpeg or .png image in '" << root << "'"
                                 << (recursive ? " or its subfolders" : "");
  if (shuffle) std::shuffle(entries.begin(), entries.end(), std::mt19937_64(seed));
  for (size_t i = 0; i < entries.size(); ++i) entries[i].index = static_cast<int64_t>(i);
  return entries;
}

void WriteImageList(const std::string& path, const std::vector<ImageListEntry>& entries) {
  std::string text;
  char buf[64];
  for (const ImageListEntry& e : entries) {
    text += std::to_string(e.index);
    for (float label : e.labels) {
      std::snprintf(buf, sizeof(buf), "\t%f", static_cast<double>(label));
      text += buf;
    }
    text += "\t" + e.path + "\n";
  }
  AtomicFileWriter file(path);
  file.Write(text.data(), text.size());
  file.Commit();
}

std::vector<ImageListEntry> ReadImageList(const std::string& path) {
  std::ifstream in(path);
  if (!in) COHORT_THROW() << "im2rec: cannot open the list '" << path << "'";
  std::vector<ImageListEntry> entries;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::stringstream s(line);
    for (std::string f; std::getline(s, f, '\t');) fields.push_back(f);
    ImageListEntry e;
    bool ok = fields.size() >= 3;
    try {
      size_t used = 0;
      e.index = ok ? std::stoll(fields[0], &used) : 0;
      ok = ok && used == fields[0].size() && e.index >= 0;
      for (size_t i = 1; ok && i + 1 < fields.size(); ++i) {
        e.labels.push_back(std::stof(fields[i], &used));
        ok = used == fields[i].size();
      }
    } catch (const std::exception&) {
      ok = false;
    }
    if (!ok) {
      throw DataError("'" + path + "' line " + std::to_string(number) +
                          ": expected 'index<TAB>label[<TAB>label...]<TAB>path', found '" + line +
                          "'",
                      __FILE__, __LINE__);
    }
    e.path = fields.back();
    entries.push_back(std::move(e));
  }
  return entries;
}

PackResult PackImages(const std::vector<ImageListEntry>& entries, const std::string& root,
                      const std::string& prefix, const PackOptions& o) {
  COHORT_CHECK(o.encoding == ".jpg" || o.encoding == ".png")
      << "im2rec: encoding must be .jpg or .png, got '" << o.encoding << "'";
  COHORT_CHECK(o.quality >= 1 && o.quality <= 100)
      << "im2rec: quality must be in [1, 100], got " << o.quality;
  COHORT_CHECK(o.color == 0 || o.color == 1) << "im2rec: color must be 1 or 0, got " << o.color;
  COHORT_CHECK(o.resize >= 0) << "im2rec: resize must not be negative, got " << o.resize;
  RecordIOWriter rec(prefix + ".rec");
  std::vector<RecordIndexEntry> index;
  PackResult result;
  ThreadArena arena(std::max(1, o.num_threads));
  // Chunks of records encoded in parallel, then written in list order.
  constexpr size_t kChunk = 256;
  std::vector<std::string> records(kChunk), errors(kChunk);
  for (size_t begin = 0; begin < entries.size(); begin += kChunk) {
    const size_t n = std::min(kChunk, entries.size() - begin);
    arena.ParallelFor(0, static_cast<int64_t>(n), 1, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i) {
        const ImageListEntry& e = entries[begin + i];
        std::string bytes = ReadWhole((fs::path(root) / e.path).string());  // throws
        errors[i].clear();
        try {
          records[i] = PackOne(e, std::move(bytes), o);
        } catch (const Error& error) {  // does not decode: skipped, as im2rec.py does
          errors[i] = e.path + ": " + error.message();
        }
      }
    });
    for (size_t i = 0; i < n; ++i) {
      if (!errors[i].empty()) {
        result.skipped.push_back(errors[i]);
        continue;
      }
      index.push_back({entries[begin + i].index, rec.Write(records[i])});
      ++result.packed;
    }
  }
  rec.Close();
  const std::string idx = FormatRecordIndex(index);
  AtomicFileWriter idx_file(prefix + ".idx");
  idx_file.Write(idx.data(), idx.size());
  idx_file.Commit();
  return result;
}

}  // namespace cohort
