// What MXNet's tools/im2rec.py does, for cohort-im2rec: list the images of a folder per class
// (.lst), and pack a list's images into RecordIO (.rec + .idx) that ImageRecordIter, Cohort's or
// MXNet's, reads.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cohort {

// One line of a .lst file: "index\tlabel[\tlabel...]\tpath\n" (labels written with %f).
struct ImageListEntry {
  int64_t index = 0;
  std::vector<float> labels;
  std::string path;  // relative to the image root
};

// im2rec.py's --exts: the file extensions listed (compared without case).
inline const std::vector<std::string> kDefaultImageExts = {".jpeg", ".jpg", ".png"};

// The image files under `root` (extensions `exts`), as im2rec.py's list_image. With `recursive`
// every folder that holds images, at any depth and root included, is a class of its own,
// labelled in the order of os.walk (a folder's images before its subfolders, names sorted,
// depth first; a folder without images takes no label), and `class_folders` gets those
// folders, relative to root, label by label; without, the images directly in root, sorted, all
// labelled 0. With `given_classes` (a class map of another split, ReadClassMap), folders are
// labelled by it instead, so a split missing a class keeps the numbering; a folder it lacks
// throws naming it. Shuffled with `seed` when `shuffle` (im2rec.py shuffles by default), then
// indexed 0, 1, ... in list order. Throws naming root when it is not a folder or holds no image.
std::vector<ImageListEntry> ListImages(const std::string& root, bool recursive, bool shuffle,
                                       uint64_t seed,
                                       std::vector<std::string>* class_folders = nullptr,
                                       const std::vector<std::string>& exts = kDefaultImageExts,
                                       const std::vector<std::string>* given_classes = nullptr);

// The class map beside a list (PREFIX.classes): one "label<TAB>folder" line a class, label
// by label. Written atomically; read back checking the labels run 0, 1, ... (errors name the
// file and line).
void WriteClassMap(const std::string& path, const std::vector<std::string>& class_folders);
std::vector<std::string> ReadClassMap(const std::string& path);

// im2rec.py's make_list: the list cut into `chunks` (suffix _0, _1, ... when more than one),
// each into _test (the first test_ratio of the chunk), _train (the next train_ratio) and _val
// (the rest, when the ratios leave one), or kept whole when train_ratio is 1. Returns (suffix,
// entries) pairs, suffix "" for the whole list; throws a ConfigError for ratios outside [0, 1]
// or summing above 1, or chunks below 1.
std::vector<std::pair<std::string, std::vector<ImageListEntry>>> SplitImageList(
    const std::vector<ImageListEntry>& entries, int chunks, double train_ratio, double test_ratio);

// Writes `entries` to `path` atomically, as im2rec.py's write_list does.
void WriteImageList(const std::string& path, const std::vector<ImageListEntry>& entries);
// Reads a .lst file; throws a DataError naming the file and line for a malformed line.
std::vector<ImageListEntry> ReadImageList(const std::string& path);

struct PackOptions {
  int resize = 0;           // the shorter side resized to this; 0: kept
  int quality = 95;         // JPEG quality
  std::string encoding = ".jpg";  // ".jpg" or ".png"
  int color = 1;            // 1: RGB, 0: gray
  bool pass_through = false;  // store each file's bytes unchanged (no decode, resize or encode)
  bool center_crop = false;   // the centered square of each image, before any resize
  bool pack_label = false;    // every label of a list line (else the first, as im2rec.py)
  int num_threads = 1;
};

struct PackResult {
  int64_t packed = 0;
  std::vector<std::string> skipped;  // "path: why", for images that did not decode
};

// Throws a ConfigError naming the first option out of range (encoding, quality, color, resize,
// threads).
void CheckPackOptions(const PackOptions& o);

// Packs the images of `entries` (paths under `root`) into prefix.rec and prefix.idx (key =
// the entry's index), in list order, each written atomically. An image that does not decode is
// skipped and reported (as im2rec.py does); an unreadable file throws naming it.
PackResult PackImages(const std::vector<ImageListEntry>& entries, const std::string& root,
                      const std::string& prefix, const PackOptions& options);

}  // namespace cohort
