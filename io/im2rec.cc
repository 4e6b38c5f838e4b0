// Image lists and packing, as MXNet's tools/im2rec.py (io/im2rec.h).
#include "io/im2rec.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/thread_arena.h"
#include "io/image_codec.h"
#include "io/recordio.h"

namespace cohort {
namespace fs = std::filesystem;
namespace {

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

bool IsImage(const fs::path& p, const std::vector<std::string>& exts) {
  const std::string ext = Lower(p.extension().string());
  return std::any_of(exts.begin(), exts.end(),
                     [&](const std::string& e) { return Lower(e) == ext; });
}

// The images directly in `dir`, sorted.
std::vector<fs::path> ImagesIn(const fs::path& dir, const std::vector<std::string>& exts) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && IsImage(e.path(), exts)) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The largest image file packed: a .lst may name anything, and /dev/zero never ends.
constexpr uintmax_t kMaxImageFileBytes = uintmax_t{256} << 20;

// A regular file's bytes, up to kMaxImageFileBytes: a device, FIFO (which would block) or
// directory is refused before it is opened, so the entry is skipped and named.
std::string ReadWhole(const std::string& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status)) COHORT_THROW() << "im2rec: cannot read image '" << path << "'";
  if (!fs::is_regular_file(status)) {
    COHORT_THROW() << "im2rec: '" << path
                   << "' is not a regular file (a device, FIFO or directory): not an image";
  }
  const uintmax_t size = fs::file_size(path, error);
  if (error) COHORT_THROW() << "im2rec: cannot read image '" << path << "'";
  if (size > kMaxImageFileBytes) {
    COHORT_THROW() << "im2rec: '" << path << "' holds " << size << " bytes, more than the "
                   << (kMaxImageFileBytes >> 20) << " MiB an image file may";
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) COHORT_THROW() << "im2rec: cannot read image '" << path << "'";
  std::string bytes(static_cast<size_t>(size), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  bytes.resize(static_cast<size_t>(in.gcount()));  // (a file that shrank meanwhile)
  return bytes;
}

// The centered square of `image` (the longer side's margins rounded down, as im2rec.py).
void CenterSquare(const Image& image, Image* out) {
  const int side = std::min(image.width, image.height);
  const int top = (image.height - side) / 2, left = (image.width - side) / 2;
  out->width = out->height = side;
  out->channels = image.channels;
  out->pixels.resize(static_cast<size_t>(side) * side * image.channels);
  const size_t row = static_cast<size_t>(side) * image.channels;
  for (int y = 0; y < side; ++y) {
    const uint8_t* from =
        image.pixels.data() + (static_cast<size_t>(top + y) * image.width + left) * image.channels;
    std::copy(from, from + row, out->pixels.data() + y * row);
  }
}

// One entry's record: its header and the image `bytes`, re-encoded unless pass_through.
std::string PackOne(const ImageListEntry& e, std::string bytes, const PackOptions& o) {
  if (!o.pass_through) {
    Image image, square, resized;
    DecodeImage(bytes, o.color == 0 ? 1 : 3, &image);
    const Image* out = &image;
    if (o.center_crop) {  // im2rec.py: the centered square, margins rounded down
      CenterSquare(image, &square);
      out = &square;
    }
    if (o.resize > 0) {
      ResizeShorterSide(*out, o.resize, &resized);
      out = &resized;
    }
    bytes = o.encoding == ".png" ? EncodePng(*out) : EncodeJpeg(*out, o.quality);
  }
  ImageRecordHeader header;
  header.id = static_cast<uint64_t>(e.index);
  if (o.pack_label) {  // im2rec.py's --pack-label: every label, as an array (flag = count)
    header.labels = e.labels;
    header.flag = static_cast<uint32_t>(e.labels.size());
  } else {
    header.label = e.labels.at(0);
  }
  return PackImageRecord(header, bytes);
}

}  // namespace

namespace {

// im2rec.py's os.walk(root, followlinks=True): a folder's images (sorted) before its subfolders
// (sorted, depth first); each folder that holds an image takes the next label, root included.
// A folder reached again through a symbolic link is walked once (os.walk would loop).
struct Walk {
  const fs::path& root;
  const std::vector<std::string>& exts;
  const std::vector<std::string>* given;  // a class map to label by, or null: the walk's order
  std::set<fs::path> seen;
  std::vector<std::pair<fs::path, float>> images;
  std::vector<std::string> class_folders;
};

// The label of a class folder: the next one, or the given map's.
float LabelOf(Walk* w, const std::string& folder) {
  if (!w->given) {
    w->class_folders.push_back(folder);
    return static_cast<float>(w->class_folders.size() - 1);
  }
  const auto found = std::find(w->given->begin(), w->given->end(), folder);
  if (found == w->given->end()) {
    throw ConfigError("im2rec: class folder '" + folder + "' under '" + w->root.string() +
                          "' is not in the class map given (" + std::to_string(w->given->size()) +
                          " classes): its label is unknown",
                      __FILE__, __LINE__);
  }
  return static_cast<float>(found - w->given->begin());
}

void WalkClasses(const fs::path& dir, Walk* w) {
  if (!w->seen.insert(fs::canonical(dir)).second) return;
  std::vector<fs::path> folders, files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory()) {
      folders.push_back(e.path());
    } else if (e.is_regular_file() && IsImage(e.path(), w->exts)) {
      files.push_back(e.path());
    }
  }
  auto by_name = [](const fs::path& a, const fs::path& b) {
    return a.filename().string() < b.filename().string();
  };
  std::sort(folders.begin(), folders.end(), by_name);
  std::sort(files.begin(), files.end(), by_name);
  if (!files.empty()) {
    const float label = LabelOf(w, fs::relative(dir, w->root).generic_string());
    for (const fs::path& f : files) w->images.emplace_back(f, label);
  }
  for (const fs::path& f : folders) WalkClasses(f, w);
}

}  // namespace

std::vector<ImageListEntry> ListImages(const std::string& root, bool recursive, bool shuffle,
                                       uint64_t seed, std::vector<std::string>* class_folders,
                                       const std::vector<std::string>& exts,
                                       const std::vector<std::string>* given_classes) {
  COHORT_CHECK(fs::is_directory(root)) << "im2rec: '" << root << "' is not a folder";
  const fs::path root_path(root);
  Walk w{root_path, exts, given_classes, {}, {}, {}};
  if (recursive) {
    WalkClasses(root_path, &w);
  } else {
    for (const fs::path& f : ImagesIn(root_path, exts)) w.images.emplace_back(f, 0.0f);
  }
  if (w.images.empty()) {
    std::string listed;
    for (const std::string& e : exts) listed += (listed.empty() ? "" : ", ") + e;
    COHORT_THROW() << "im2rec: no image (" << listed << ") in '" << root << "'"
                   << (recursive ? " or its subfolders" : "");
  }
  std::vector<ImageListEntry> entries;
  for (const auto& [file, label] : w.images) {
    entries.push_back({0, {label}, fs::relative(file, root_path).generic_string()});
  }
  if (shuffle) std::shuffle(entries.begin(), entries.end(), std::mt19937_64(seed));
  for (size_t i = 0; i < entries.size(); ++i) entries[i].index = static_cast<int64_t>(i);
  if (class_folders) *class_folders = given_classes ? *given_classes : std::move(w.class_folders);
  return entries;
}

void WriteClassMap(const std::string& path, const std::vector<std::string>& class_folders) {
  std::string text;
  for (size_t c = 0; c < class_folders.size(); ++c) {
    text += std::to_string(c) + "\t" + class_folders[c] + "\n";
  }
  AtomicFileWriter file(path);
  file.Write(text.data(), text.size());
  file.Commit();
}

std::vector<std::string> ReadClassMap(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw ConfigError("im2rec: cannot open the class map '" + path + "'", __FILE__, __LINE__);
  std::vector<std::string> folders;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const size_t tab = line.find('\t');
    const std::string expected = std::to_string(folders.size());
    if (tab == std::string::npos || line.substr(0, tab) != expected || tab + 1 == line.size()) {
      throw ConfigError("'" + path + "' line " + std::to_string(number) + ": expected '" +
                            expected + "<TAB>folder', found '" + line + "'",
                        __FILE__, __LINE__);
    }
    folders.push_back(line.substr(tab + 1));
  }
  if (folders.empty()) {
    throw ConfigError("im2rec: the class map '" + path + "' lists no class", __FILE__, __LINE__);
  }
  return folders;
}

std::vector<std::pair<std::string, std::vector<ImageListEntry>>> SplitImageList(
    const std::vector<ImageListEntry>& entries, int chunks, double train_ratio, double test_ratio) {
  if (chunks < 1) throw ConfigError("im2rec: chunks must be at least 1", __FILE__, __LINE__);
  if (!(train_ratio >= 0 && train_ratio <= 1 && test_ratio >= 0 && test_ratio <= 1 &&
        train_ratio + test_ratio <= 1)) {
    throw ConfigError("im2rec: train-ratio " + std::to_string(train_ratio) + " and test-ratio " +
                          std::to_string(test_ratio) + " must lie in [0, 1] and sum to at most 1",
                      __FILE__, __LINE__);
  }
  std::vector<std::pair<std::string, std::vector<ImageListEntry>>> lists;
  // Python's slices: bounds clamped to the sequence, an empty slice where from >= to.
  auto slice = [](const std::vector<ImageListEntry>& v, int64_t from, int64_t to) {
    const auto size = static_cast<int64_t>(v.size());
    from = std::min(from, size);
    to = std::max(from, std::min(to, size));
    return std::vector<ImageListEntry>(v.begin() + from, v.begin() + to);
  };
  const auto n = static_cast<int64_t>(entries.size());
  const int64_t chunk_size = (n + chunks - 1) / chunks;
  for (int i = 0; i < chunks; ++i) {
    const std::vector<ImageListEntry> chunk = slice(entries, i * chunk_size, (i + 1) * chunk_size);
    const std::string name = chunks > 1 ? "_" + std::to_string(i) : "";
    const auto sep = static_cast<int64_t>(static_cast<double>(chunk_size) * train_ratio);
    const auto sep_test = static_cast<int64_t>(static_cast<double>(chunk_size) * test_ratio);
    if (train_ratio == 1.0) {
      lists.emplace_back(name, chunk);
      continue;
    }
    if (test_ratio > 0) lists.emplace_back(name + "_test", slice(chunk, 0, sep_test));
    if (train_ratio + test_ratio < 1.0) {
      lists.emplace_back(name + "_val", slice(chunk, sep_test + sep, chunk_size));
    }
    lists.emplace_back(name + "_train", slice(chunk, sep_test, sep_test + sep));
  }
  return lists;
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

void CheckPackOptions(const PackOptions& o) {
  auto refuse = [](const std::string& what) {
    throw ConfigError("im2rec: " + what, __FILE__, __LINE__);
  };
  if (o.encoding != ".jpg" && o.encoding != ".png") {
    refuse("encoding must be .jpg or .png, got '" + o.encoding + "'");
  }
  if (o.quality < 1 || o.quality > 100) {
    refuse("quality must be in [1, 100], got " + std::to_string(o.quality));
  }
  if (o.color != 0 && o.color != 1) refuse("color must be 1 or 0, got " + std::to_string(o.color));
  if (o.resize < 0 || o.resize > kMaxResizeSide) {
    refuse("resize must be in [0, " + std::to_string(kMaxResizeSide) + "] (a square of " +
           std::to_string(kMaxResizeSide) + " holds the most pixels an image may have), got " +
           std::to_string(o.resize));
  }
  if (o.num_threads < 1 || o.num_threads > 1024) {
    refuse("num-thread must be in [1, 1024], got " + std::to_string(o.num_threads));
  }
}

PackResult PackImages(const std::vector<ImageListEntry>& entries, const std::string& root,
                      const std::string& prefix, const PackOptions& o) {
  CheckPackOptions(o);
  RecordIOWriter rec(prefix + ".rec");
  std::vector<RecordIndexEntry> index;
  PackResult result;
  ThreadArena arena(o.num_threads);
  // Chunks of records encoded in parallel, then written in list order.
  constexpr size_t kChunk = 256;
  std::vector<std::string> records(kChunk), errors(kChunk);
  for (size_t begin = 0; begin < entries.size(); begin += kChunk) {
    const size_t n = std::min(kChunk, entries.size() - begin);
    arena.ParallelFor(0, static_cast<int64_t>(n), 1, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i) {
        const ImageListEntry& e = entries[begin + i];
        errors[i].clear();
        try {  // unreadable or undecodable: skipped and named, as im2rec.py does
          records[i] = PackOne(e, ReadWhole((fs::path(root) / e.path).string()), o);
        } catch (const Error& error) {
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
  // Nothing packed from a list is a wrong ROOT or list, not a data set.
  if (result.packed == 0 && !result.skipped.empty()) {
    throw DataError("im2rec: none of the " + std::to_string(result.skipped.size()) +
                        " images listed could be packed (under '" + root + "'?); the first: " +
                        result.skipped.front(),
                    __FILE__, __LINE__);
  }
  rec.Close();
  const std::string idx = FormatRecordIndex(index);
  AtomicFileWriter idx_file(prefix + ".idx");
  idx_file.Write(idx.data(), idx.size());
  idx_file.Commit();
  return result;
}

}  // namespace cohort
