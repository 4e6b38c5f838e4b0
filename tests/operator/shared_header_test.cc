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

// The stem of the operator/*.cc file that registers `op`: its name appears quoted in the file's
// registration function (void Register...(OpRegistry& r), at the end of the file).
std::vector<std::string> RegisteringFiles(const std::string& op) {
  std::vector<std::string> stems;
  for (const auto& entry : fs::directory_iterator(kOperatorDir)) {
    if (entry.path().extension() != ".cc") continue;
    const std::string text = Read(entry.path());
    const size_t registration = text.rfind("\nvoid Register");
    if (registration != std::string::npos &&
        text.find('"' + op + '"', registration) != std::string::npos) {
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

// The names of the structs a header defines whose members run on both sides (row bodies and
// other functors: a COHORT_HOST_DEVICE member before the struct's closing "};").
std::set<std::string> SharedFunctors(const std::string& header) {
  static const std::regex kStruct(R"(\nstruct (\w+) \{)");
  std::set<std::string> names;
  for (std::sregex_iterator it(header.begin(), header.end(), kStruct), end; it != end; ++it) {
    const size_t begin = it->position(), close = header.find("\n};", begin);
    if (header.substr(begin, close - begin).find("COHORT_HOST_DEVICE") != std::string::npos) {
      names.insert((*it)[1]);
    }
  }
  return names;
}

// Whether `code` calls any of `functions` or names any of `functors` (a kernel that receives a
// row body as a parameter and launches it uses it as much as one that builds it).
bool Uses(const std::string& code, const std::set<std::string>& functions,
          const std::set<std::string>& functors = {}) {
  for (const std::string& name : functions) {
    // A call, with or without template arguments (BinaryValue<C>(...)).
    if (std::regex_search(code, std::regex("\\b" + name + "\\s*(<[^;(){}]*>)?\\s*[({]"))) {
      return true;
    }
  }
  for (const std::string& name : functors) {
    if (std::regex_search(code, std::regex("\\b" + name + "\\b"))) return true;
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
    const std::set<std::string> functors = SharedFunctors(Read(header));
    if (shared.empty() && functors.empty()) continue;  // cuBLAS, cuDNN or copies alone
    EXPECT_TRUE(Uses(cc, shared, functors))
        << stem << ".cc calls none of its header's shared functions";
    EXPECT_TRUE(Uses(cu, shared, functors))
        << stem << ".cu calls none of its header's shared functions";
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
  const std::set<std::string> functors = SharedFunctors(Read(kOperatorDir / "softmax.h"));
  EXPECT_TRUE(functors.count("SoftmaxRows"));
  EXPECT_FALSE(functors.count("SoftmaxParam"));  // parsed on the host only
  EXPECT_TRUE(Uses("ForEachRow(g, outer, size, inner, SoftmaxRows{x, y});", {}, functors));
  EXPECT_FALSE(Uses("ForEachRow(g, outer, size, inner, rows);", {}, functors));
}

}  // namespace
}  // namespace cohort
