// Initializer.
#include "optimizer/initializer.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <nlohmann/json.hpp>

namespace cohort {

const OptionTable<InitializerOptions>& InitializerOptions::Table() {
  using I = InitializerOptions;
  static const OptionTable<I> table = [] {
    OptionTable<I> t("initializer");
    t.Field("name", &I::kind, "uniform, normal, xavier, msra, constant, zero or one (of *_weight)")
        .Field("magnitude", &I::magnitude, "xavier: scale of the fan")
        .Field("rnd_type", &I::rnd_type, "xavier: uniform or gaussian")
        .Field("factor_type", &I::factor_type, "xavier, msra: avg, in or out")
        .Field("scale", &I::scale, "uniform: U(-scale, scale)")
        .Field("sigma", &I::sigma, "normal: N(0, sigma^2)")
        .Field("slope", &I::slope, "msra: the PReLU slope")
        .Field("value", &I::value, "constant: the value");
    return t;
  }();
  return table;
}

Initializer::Initializer(InitializerOptions options) : options_(std::move(options)) {
  const std::string& k = options_.kind;
  COHORT_CHECK(k == "uniform" || k == "normal" || k == "xavier" || k == "msra" || k == "constant" ||
               k == "zero" || k == "one")
      << "unknown initializer '" << k
      << "': expected uniform, normal, xavier, msra, constant, zero or one";
  COHORT_CHECK(options_.rnd_type == "uniform" || options_.rnd_type == "gaussian")
      << "initializer rnd_type '" << options_.rnd_type << "': expected uniform or gaussian";
  COHORT_CHECK(options_.factor_type == "avg" || options_.factor_type == "in" ||
               options_.factor_type == "out")
      << "initializer factor_type '" << options_.factor_type << "': expected avg, in or out";
}

InitializerOptions Initializer::FromInitAttr(const std::string& name,
                                             const std::string& init_attr) {
  const std::string where = "'" + name + "': __init__ '" + init_attr + "'";
  InitializerOptions o;
  try {
    const nlohmann::json j = nlohmann::json::parse(init_attr);
    COHORT_CHECK(j.is_array() && j.size() == 2 && j[0].is_string() && j[1].is_object())
        << where << ": expected [\"kind\", {arguments}], as MXNet's Initializer.dumps() writes";
    o.kind = j[0].get<std::string>();
    // MXNet's registry takes names in any case (PReLU's slopes are ["Constant", ...]).
    std::transform(o.kind.begin(), o.kind.end(), o.kind.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (o.kind == "msraprelu") o.kind = "msra";  // MXNet's class name
    for (const auto& [key, value] : j[1].items()) {
      if (key == "rnd_type" || key == "factor_type") {
        (key == "rnd_type" ? o.rnd_type : o.factor_type) = value.get<std::string>();
        continue;
      }
      double* field = key == "value"       ? &o.value
                      : key == "scale"     ? &o.scale
                      : key == "sigma"     ? &o.sigma
                      : key == "magnitude" ? &o.magnitude
                      : key == "slope"     ? &o.slope
                                           : nullptr;
      COHORT_CHECK(field != nullptr) << where << ": unknown argument '" << key << "'";
      COHORT_CHECK(value.is_number()) << where << ": '" << key << "' must be a number";
      *field = value.get<double>();
    }
  } catch (const nlohmann::json::exception& e) {
    COHORT_THROW() << where << ": " << e.what();
  }
  try {
    Initializer check(o);
  } catch (const Error& e) {
    COHORT_THROW() << where << ": " << e.message();
  }
  return o;
}

void Initializer::operator()(const std::string& name, const NDArray& array, SeedStream& draws,
                             const std::string& init_attr) const {
  if (!init_attr.empty()) {
    Initializer(FromInitAttr(name, init_attr)).InitWeight(name, array, draws);
    return;
  }
  auto ends = [&](const char* suffix) { return name.ends_with(suffix); };
  if (ends("_bias") || ends("_beta") || ends("_moving_mean") || ends("_running_mean")) {
    array.Fill(0);
  } else if (ends("_gamma") || ends("_moving_var") || ends("_running_var")) {
    array.Fill(1);
  } else if (ends("_weight")) {
    InitWeight(name, array, draws);
  } else {
    COHORT_THROW() << "cannot initialize '" << name
                   << "': expected a name ending in _weight, _bias, _gamma, _beta, _moving_mean "
                      "or _moving_var";
  }
}

void Initializer::InitWeight(const std::string& name, const NDArray& array,
                             SeedStream& draws) const {
  float* w = array.data<float>();
  const int64_t n = array.size();
  const std::string& k = options_.kind;
  if (k == "zero" || k == "one" || k == "constant") {
    array.Fill(k == "zero" ? 0.0 : k == "one" ? 1.0 : options_.value);
    return;
  }
  bool gaussian = k == "normal";
  double scale = k == "uniform" ? options_.scale : options_.sigma;
  if (k == "xavier" || k == "msra") {
    const Shape& s = array.shape();
    COHORT_CHECK_GE(s.ndim(), 2) << "xavier/msra initialization of '" << name << "' with shape "
                                 << s << " needs at least 2 dimensions";
    double receptive = 1;
    for (int d = 2; d < s.ndim(); ++d) receptive *= static_cast<double>(s[d]);
    const double fan_in = s[1] * receptive, fan_out = s[0] * receptive;
    const double factor = options_.factor_type == "in"    ? fan_in
                          : options_.factor_type == "out" ? fan_out
                                                          : (fan_in + fan_out) / 2;
    const double magnitude =
        k == "msra" ? 2.0 / (1 + options_.slope * options_.slope) : options_.magnitude;
    scale = std::sqrt(magnitude / factor);
    gaussian = k == "msra" || options_.rnd_type == "gaussian";
  }
  const uint64_t key = draws.NextDrawKey();
  for (int64_t i = 0; i < n; ++i) {
    const auto u = static_cast<uint64_t>(i);
    w[i] = gaussian ? static_cast<float>(RandomGaussian(key, u, 0.0, scale))
                    : RandomUniform(key, u, -scale, scale);
  }
}

}  // namespace cohort
