// Initializers (MXNet's initializer module), chosen per argument name as MXNet does.
#pragma once

#include <string>

#include "base/options.h"
#include "base/random_stream.h"
#include "ndarray/ndarray.h"

namespace cohort {

struct InitializerOptions {
  std::string kind = "xavier";       // uniform, normal, xavier, msra, constant, zero, one
  double scale = 0.07;               // uniform: U(-scale, scale)
  double sigma = 0.01;               // normal: N(0, sigma²)
  std::string rnd_type = "uniform";  // xavier: uniform or gaussian
  std::string factor_type = "avg";   // xavier, msra: avg, in or out
  double magnitude = 3.0;            // xavier
  double slope = 0.25;               // msra (MSRAPrelu)
  double value = 0.0;                // constant

  // The `initializer` section (Note [Declared options]); `name` is `kind`.
  static const OptionTable<InitializerOptions>& Table();
};

// Fills arrays by name: "*_bias", "*_beta", "*_moving_mean" get 0; "*_gamma", "*_moving_var" get
// 1; "*_weight" gets the configured initializer. Other names are an error naming the array.
class Initializer {
 public:
  explicit Initializer(InitializerOptions options);
  // `init_attr`, a variable's "__init__" attribute, overrides the rules by name as in MXNet: its
  // initializer (MXNet's dumps() text, ["constant", {"value": 0.5}], ["xavier", {"magnitude":
  // 2}], ["zero", {}]) fills the array whatever its name. A random fill takes the stream's
  // next draw and gives the values of mx.random.uniform/normal after the same draws (the
  // scale computed as cohort.initializer computes it), so a stream seeded as mx.random.seed
  // fills parameters as Module.init_params does when called in sorted name order.
  void operator()(const std::string& name, const NDArray& array, SeedStream& draws,
                  const std::string& init_attr = "") const;
  // The options an "__init__" attribute gives; errors name the variable.
  static InitializerOptions FromInitAttr(const std::string& name, const std::string& init_attr);

 private:
  void InitWeight(const std::string& name, const NDArray& array, SeedStream& draws) const;
  InitializerOptions options_;
};

}  // namespace cohort
