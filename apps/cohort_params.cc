// cohort-params: inspect and compare MXNet .params files.
//   cohort-params show FILE            one line per array: name, dtype, shape, min, max, mean
//   cohort-params diff A B [--tol T]   largest |a - b| per common array; exit 1 when any exceeds
//                                      T (default 0) or the names differ
// Exit code 2, with one line on stderr, when a file cannot be read.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <string>

#include "apps/tool_main.h"
#include "base/error.h"
#include "ndarray/params_io.h"

namespace cohort {
namespace {

// Unnamed lists get names "#0", "#1", ... so both kinds of file compare the same way.
std::map<std::string, NDArray> LoadNamed(const std::string& path) {
  ParamsFile file = LoadParamsFile(path);
  std::map<std::string, NDArray> out;
  for (size_t i = 0; i < file.arrays.size(); ++i) {
    std::string name = file.names.empty() ? "#" + std::to_string(i) : file.names[i];
    COHORT_CHECK(out.emplace(name, file.arrays[i]).second)
        << "'" << path << "': array " << i << ": name '" << name << "' appears twice";
  }
  return out;
}

std::string Describe(const NDArray& a) {
  return a.is_none() ? "none" : std::string(DTypeName(a.dtype())) + " " + a.shape().ToString();
}

int Show(const std::string& path) {
  ParamsFile file = LoadParamsFile(path);
  for (size_t i = 0; i < file.arrays.size(); ++i) {
    const NDArray& a = file.arrays[i];
    const std::string name = file.names.empty() ? "#" + std::to_string(i) : file.names[i];
    if (a.is_none()) {
      std::printf("%s\tnone\n", name.c_str());
      continue;
    }
    std::printf("%s\t%s\t%s", name.c_str(), std::string(DTypeName(a.dtype())).c_str(),
                a.shape().ToString().c_str());
    std::vector<double> v = a.ToVector<double>();
    if (v.empty()) {
      std::printf("\tmin=-\tmax=-\tmean=-\n");
      continue;
    }
    double lo = v[0], hi = v[0], sum = 0;
    for (double x : v) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      sum += x;
    }
    std::printf("\tmin=%.9g\tmax=%.9g\tmean=%.9g\n", lo, hi, sum / static_cast<double>(v.size()));
  }
  return 0;
}

// Largest |a - b|; NaN against a number counts as infinitely different, NaN against NaN as equal.
// Integers are compared as int64 (as doubles, 2^62 + 1 and 2^62 were equal).
double MaxAbsDiff(const NDArray& a, const NDArray& b) {
  const bool integers = a.dtype() == DType::kInt64 || a.dtype() == DType::kInt32 ||
                        a.dtype() == DType::kInt8 || a.dtype() == DType::kUint8;
  if (integers) {
    const std::vector<int64_t> x = a.ToVector<int64_t>(), y = b.ToVector<int64_t>();
    long double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      worst = std::max(worst, std::fabs(static_cast<long double>(x[i]) - y[i]));
    }
    return static_cast<double>(worst);
  }
  std::vector<double> x = a.ToVector<double>(), y = b.ToVector<double>();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) || std::isnan(y[i])) {
      if (std::isnan(x[i]) != std::isnan(y[i])) return std::numeric_limits<double>::infinity();
      continue;
    }
    if (x[i] != y[i]) worst = std::max(worst, std::fabs(x[i] - y[i]));
  }
  return worst;
}

int Diff(const std::string& path_a, const std::string& path_b, double tol) {
  std::map<std::string, NDArray> a = LoadNamed(path_a), b = LoadNamed(path_b);
  bool differ = false;
  for (const auto& [name, x] : a) {
    auto it = b.find(name);
    if (it == b.end()) {
      std::printf("only in %s: %s\n", path_a.c_str(), name.c_str());
      differ = true;
      continue;
    }
    const NDArray& y = it->second;
    if (x.is_none() || y.is_none() || x.shape() != y.shape() || x.dtype() != y.dtype()) {
      const bool same = x.is_none() && y.is_none();
      if (!same) {
        std::printf("%s\tmismatch: %s vs %s\n", name.c_str(), Describe(x).c_str(),
                    Describe(y).c_str());
      }
      differ |= !same;
      continue;
    }
    const double d = MaxAbsDiff(x, y);
    const bool over = !(d <= tol);
    std::printf("%s\tmax_abs_diff=%.9g%s\n", name.c_str(), d, over ? "\tEXCEEDS" : "");
    differ |= over;
  }
  for (const auto& [name, y] : b) {
    if (!a.count(name)) {
      std::printf("only in %s: %s\n", path_b.c_str(), name.c_str());
      differ = true;
    }
  }
  return differ ? 1 : 0;
}

}  // namespace
}  // namespace cohort

int main(int argc, char** argv) {
  CLI::App app{"Inspect and compare MXNet .params files"};
  app.require_subcommand(1);
  std::string show_file, diff_a, diff_b;
  double tol = 0;
  CLI::App* show =
      app.add_subcommand("show", "one line per array: name, dtype, shape, min, max, mean");
  show->add_option("FILE", show_file, "a .params file")->required();
  CLI::App* diff = app.add_subcommand("diff", "largest absolute difference per common array");
  diff->add_option("A", diff_a, "first .params file")->required();
  diff->add_option("B", diff_b, "second .params file")->required();
  // Not CLI::NonNegativeNumber: it lets NaN through and prints DBL_MAX in full when it refuses.
  const CLI::Validator finite_tolerance(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(v) || v < 0) {
          return "expected a finite number >= 0, got '" + text + "'";
        }
        return "";
      },
      "TOL>=0");
  diff->add_option("--tol", tol, "largest allowed absolute difference")->check(finite_tolerance);
  return cohort::ParseAndRun(app, argc, argv, "cohort-params", [&] {
    return show->parsed() ? cohort::Show(show_file) : cohort::Diff(diff_a, diff_b, tol);
  });
}
