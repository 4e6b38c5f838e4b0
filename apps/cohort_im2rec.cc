// cohort-im2rec: MXNet's tools/im2rec.py in C++. Lists a folder per class into PREFIX.lst
// and packs a list's images into PREFIX.rec + PREFIX.idx, which ImageRecordIter (Cohort's or
// MXNet's) reads.
//   cohort-im2rec --list --recursive PREFIX ROOT   # PREFIX.lst: ROOT/<class>/... labelled 0, 1, ...
//   cohort-im2rec PREFIX ROOT                      # pack PREFIX.lst (made first if absent)
// Exit status: 0 done, 2 bad arguments or input (named on stderr), 1 anything else.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>

#include "apps/tool_main.h"
#include "base/error.h"
#include "io/im2rec.h"

namespace cohort {
namespace {

struct Args {
  std::string prefix, root;
  bool list = false, recursive = false, no_shuffle = false;
  uint64_t seed = 100;  // im2rec.py's random.seed(100)
  PackOptions pack;
};

int Run(const Args& a) {
  const std::string lst = a.prefix + ".lst";
  if (!a.list) CheckPackOptions(a.pack);  // before a list is written
  if (a.list || !std::filesystem::exists(lst)) {
    std::vector<std::string> classes;
    const auto entries =
        ListImages(a.root, a.recursive || !a.list, !a.no_shuffle, a.seed, &classes);
    for (size_t c = 0; c < classes.size(); ++c) std::printf("%s %zu\n", classes[c].c_str(), c);
    WriteImageList(lst, entries);
    std::printf("%s: %zu image(s)\n", lst.c_str(), entries.size());
    if (a.list) return 0;
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
