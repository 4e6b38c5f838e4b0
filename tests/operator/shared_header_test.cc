// Every registered op keeps the file trio of Note [Shared kernel logic]: a header that its CPU
// kernel and its CUDA kernel both include, and where the header has COHORT_HOST_DEVICE functions,
// both kernels call them. Reads the sources (COHORT_SOURCE_DIR), so a new op without the header,
// or a .cu that re-implements its math instead of calling the header, fails here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "operator/common/operator.h"

namespace cohort {
namespace {

namespace fs = std::filesystem;

const fs::path kOperatorDir = fs::path(COHORT_SOURCE_DIR) / "operator";

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The stem of the operator/*.cc file that registers `op` (its name appears there quoted).
std::vector<std::string> RegisteringFiles(const std::string& op) {
  std::vector<std::string> stems;
  for (const auto& entry : fs::directory_iterator(kOperatorDir)) {
    if (entry.path().extension() != ".cc") continue;
    const std::string text = Read(entry.path());
    if (text.find("Register") != std::string::npos &&
        text.find('"' + op + '"') != std::string::npos) {
      stems.push_back(entry.path().stem().string());
    }
  }
  return stems;
}

// The names of the COHORT_HOST_DEVICE functions a header defines.
std::set<std::string> SharedFunctions(const std::string& header) {
  static const std::regex kFunction(R"(COHORT_HOST_DEVICE\s+[\w:<>]+\s+(\w+)\s*\()");
  std::set<std::string> names;
  for (std::sregex_iterator it(header.begin(), header.end(), kFunction), end; it != end; ++it) {
    if ((*it)[1] != "operator") names.insert((*it)[1]);
  }
  return names;
}

// Whether `code` calls (or names, for the row-body structs) any of `names`.
bool Uses(const std::string& code, const std::set<std::string>& names) {
  for (const std::string& name : names) {
    if (std::regex_search(code, std::regex("\\b" + name + "\\s*[({]"))) return true;
  }
  return false;
}

TEST(SharedHeaders, EveryOpsCpuAndGpuKernelsShareItsHeader) {
  const std::vector<std::string> ops = op::OpRegistry::Get().Names();
  ASSERT_GT(ops.size(), 20u);
  for (const std::string& op : ops) {
    SCOPED_TRACE(op);
    const std::vector<std::string> stems = RegisteringFiles(op);
    ASSERT_EQ(stems.size(), 1u) << "expected one operator/*.cc that registers " << op;
    const std::string& stem = stems[0];
    const fs::path header = kOperatorDir / (stem + ".h");
    ASSERT_TRUE(fs::exists(header)) << op << " has no header " << header;
    const std::string include = "#include \"operator/" + stem + ".h\"";
    const std::string cc = Read(kOperatorDir / (stem + ".cc"));
    const std::string cu = Read(kOperatorDir / (stem + ".cu"));
    ASSERT_FALSE(cu.empty()) << op << " has no CUDA kernel operator/" << stem << ".cu";
    EXPECT_NE(cc.find(include), std::string::npos) << stem << ".cc does not include its header";
    EXPECT_NE(cu.find(include), std::string::npos) << stem << ".cu does not include its header";
    const std::set<std::string> shared = SharedFunctions(Read(header));
    if (shared.empty()) continue;  // cuBLAS, cuDNN or copies alone: no per-element math
    EXPECT_TRUE(Uses(cc, shared)) << stem << ".cc calls none of its header's shared functions";
    EXPECT_TRUE(Uses(cu, shared)) << stem << ".cu calls none of its header's shared functions";
  }
}

// The row bodies count as shared math too: their structs are built by both kernels.
TEST(SharedHeaders, TheCheckSeesRowBodiesAndFunctions) {
  const std::string header = Read(kOperatorDir / "pooling.h");
  const std::set<std::string> shared = SharedFunctions(header);
  EXPECT_TRUE(shared.count("PoolValue"));
  EXPECT_TRUE(shared.count("PoolGradAt"));
  EXPECT_FALSE(Uses("y[i] = in[i];", shared));
  EXPECT_TRUE(Uses("out[i] = PoolValue(w, type, in, 0, 0);", shared));
}

}  // namespace
}  // namespace cohort
