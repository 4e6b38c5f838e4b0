// cohort-im2rec: MXNet's tools/im2rec.py in C++. Lists a folder per class into PREFIX.lst
// and packs a list's images into PREFIX.rec + PREFIX.idx, which ImageRecordIter (Cohort's or
// MXNet's) reads.
//   cohort-im2rec --list --recursive PREFIX ROOT   # PREFIX.lst: ROOT/<class>/... labelled 0, 1,
//   ...
//                                                  # and PREFIX.classes: "label<TAB>folder"
//   cohort-im2rec --list --recursive --train-ratio 0.8 PREFIX ROOT  # PREFIX_train.lst, _val.lst
//   cohort-im2rec --list --recursive --classes train.classes val ROOT_VAL  # train's numbering
//   cohort-im2rec PREFIX ROOT                      # pack PREFIX.lst (made first if absent)
// Exit status: 0 done, 2 bad arguments or input (named on stderr), 1 anything else.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <optional>

#include "apps/tool_main.h"
#include "base/error.h"
#include "io/im2rec.h"

namespace cohort {
namespace {

struct Args {
  std::string prefix, root, classes;
  bool list = false, recursive = false, no_shuffle = false;
  uint64_t seed = 100;  // im2rec.py's random.seed(100)
  std::vector<std::string> exts = kDefaultImageExts;
  int chunks = 1;
  double train_ratio = 1.0, test_ratio = 0.0;
  PackOptions pack;
};

// Lists the images of ROOT into PREFIX.lst (or the splits --chunks and the ratios ask for) and,
// for classes by folder, their map into PREFIX.classes.
void MakeLists(const Args& a, bool recursive) {
  std::vector<std::string> classes;
  std::optional<std::vector<std::string>> given;
  if (!a.classes.empty()) given = ReadClassMap(a.classes);
  const auto entries = ListImages(a.root, recursive, !a.no_shuffle, a.seed, &classes, a.exts,
                                  given ? &*given : nullptr);
  if (recursive) {
    for (size_t c = 0; c < classes.size(); ++c) std::printf("%s %zu\n", classes[c].c_str(), c);
    WriteClassMap(a.prefix + ".classes", classes);
  }
  for (const auto& [suffix, part] :
       SplitImageList(entries, a.chunks, a.train_ratio, a.test_ratio)) {
    const std::string lst = a.prefix + suffix + ".lst";
    WriteImageList(lst, part);
    std::printf("%s: %zu image(s)\n", lst.c_str(), part.size());
  }
}

int Run(const Args& a) {
  const std::string lst = a.prefix + ".lst";
  if (!a.list) CheckPackOptions(a.pack);  // before a list is written
  SplitImageList({}, a.chunks, a.train_ratio, a.test_ratio);  // the ratios checked up front
  if (a.list) {
    MakeLists(a, a.recursive);
    return 0;
  }
  if (!std::filesystem::exists(lst)) {
    if (a.chunks != 1 || a.train_ratio != 1.0) {
      throw ConfigError(
          "--chunks and --train-ratio/--test-ratio split lists: use them with "
          "--list, then pack each list",
          __FILE__, __LINE__);
    }
    MakeLists(a, true);
  }
  const std::vector<ImageListEntry> entries = ReadImageList(lst);
  if (entries.empty()) throw DataError("'" + lst + "' lists no image", __FILE__, __LINE__);
  const PackResult r = PackImages(entries, a.root, a.prefix, a.pack);
  for (const std::string& s : r.skipped) std::fprintf(stderr, "cohort-im2rec: skipped %s\n", s.c_str());
  std::printf("%s.rec: %lld record(s), %zu skipped\n", a.prefix.c_str(),
              static_cast<long long>(r.packed), r.skipped.size());
  return r.packed > 0 ? 0 : 2;
}

}  // namespace
}  // namespace cohort

int main(int argc, char** argv) {
  CLI::App app{"Pack images into MXNet RecordIO (.rec + .idx), as MXNet's im2rec.py"};
  cohort::Args a;
  app.add_option("prefix", a.prefix, "output prefix: PREFIX.lst, PREFIX.rec, PREFIX.idx")
      ->required();
  app.add_option("root", a.root, "folder the list's paths are relative to")->required();
  app.add_flag("--list", a.list, "only write PREFIX.lst from the images under ROOT");
  app.add_flag("--recursive", a.recursive,
               "with --list: each subfolder of ROOT is a class (always so when packing a folder "
               "without a list)");
  app.add_flag("--no-shuffle", a.no_shuffle, "keep the list in path order");
  app.add_option("--seed", a.seed, "seed of the list's shuffle");
  app.add_option("--exts", a.exts, "extensions of the image files listed")->capture_default_str();
  app.add_option("--chunks", a.chunks, "with --list: cut the list into this many (_0, _1, ...)")
      ->capture_default_str();
  app.add_option("--train-ratio", a.train_ratio,
                 "with --list: this share of each list goes to PREFIX_train.lst (below 1: the "
                 "rest to _val.lst, after --test-ratio's share to _test.lst)")
      ->capture_default_str();
  app.add_option("--test-ratio", a.test_ratio, "with --list: this share to PREFIX_test.lst")
      ->capture_default_str();
  app.add_option("--classes", a.classes,
                 "label class folders by this class map (another split's PREFIX.classes) "
                 "instead of their order: a folder it lacks is an error");
  app.add_flag("--center-crop", a.pack.center_crop,
               "pack the centered square of each image (before --resize)");
  app.add_flag("--pack-label", a.pack.pack_label,
               "pack every label of a list line (else the first), as im2rec.py");
  app.add_option("--resize", a.pack.resize, "resize the shorter side to this (0: keep)");
  app.add_option("--quality", a.pack.quality, "JPEG quality, 1 to 100")->capture_default_str();
  app.add_option("--encoding", a.pack.encoding, ".jpg or .png")->capture_default_str();
  app.add_option("--color", a.pack.color, "1: RGB, 0: gray")->capture_default_str();
  app.add_flag("--pass-through", a.pack.pass_through,
               "store each file's bytes unchanged (no decode, resize or re-encode)");
  app.add_option("--num-thread", a.pack.num_threads, "threads that decode and encode")
      ->capture_default_str();
  if (const std::optional<int> stop = cohort::ParseCommandLine(app, argc, argv)) return *stop;
  try {
    return cohort::Run(a);
  } catch (const cohort::Error& e) {
    std::fprintf(stderr, "cohort-im2rec: %s\n", e.message().c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cohort-im2rec: %s\n", e.what());
    return 1;
  }
}
