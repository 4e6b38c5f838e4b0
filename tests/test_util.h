// What tests of every part share: comparing arrays with a tolerance, the message of an error,
// reading a file whole, and a scratch directory per test.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ndarray/ndarray.h"

namespace cohort::testing {

// What fn throws as a cohort::Error (its what()), or "no error".
inline std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// Fails where |got - want| > atol + rtol·|want| (rtol = atol = 0: equal), reporting the first
// five such elements, each named what[i].
inline void ExpectClose(const std::vector<float>& got, const std::vector<double>& want, double rtol,
                        double atol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what << ": element count";
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i])) && reported++ < 5) {
      ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", expected " << want[i];
    }
  }
}

inline void ExpectClose(const NDArray& got, const NDArray& want, double rtol, double atol,
                        const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<float> w = want.ToVector<float>();
  ExpectClose(got.ToVector<float>(), std::vector<double>(w.begin(), w.end()), rtol, atol, what);
}

// Every array of `want` (and no other) in `got`, each compared as above.
inline void ExpectClose(const std::map<std::string, NDArray>& got,
                        const std::map<std::string, NDArray>& want, double rtol, double atol,
                        const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what << ": array count";
  for (const auto& [name, array] : want) {
    auto it = got.find(name);
    ASSERT_NE(it, got.end()) << what << ": no " << name;
    ExpectClose(it->second, array, rtol, atol, what + ": " + name);
  }
}

// An array's values against a list (a braced list reads as doubles), within an absolute
// tolerance.
template <typename T = double>
void ExpectNear(const NDArray& got, const std::vector<T>& want, double atol = 1e-6,
                const std::string& what = "element") {
  ExpectClose(got.ToVector<float>(), std::vector<double>(want.begin(), want.end()), 0, atol, what);
}

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot open " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh directory per test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("cohort_" + std::string(info->test_suite_name()) + "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~ScratchDir() { std::filesystem::remove_all(dir_); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

}  // namespace cohort::testing
