// The trainer's learning-rate schedules (optimizer/lr_scheduler.h), for cohort.lr_scheduler's
// schedulers to name the engine schedule equal to each (their _engine_schedule) and for tests
// to check that the two agree.
#include "optimizer/lr_scheduler.h"
#include "python/src/bindings.h"

namespace cohort::python {
namespace {

LRScheduler::Options OptionsFromDict(const py::dict& d) {
  LRScheduler::Options o;
  for (const auto& [key, value] : d) {
    const std::string k = py::str(key);
    if (k == "base_lr")
      o.base_lr = value.cast<double>();
    else if (k == "warmup_steps")
      o.warmup_steps = value.cast<int64_t>();
    else if (k == "warmup_begin_lr")
      o.warmup_begin_lr = value.cast<double>();
    else if (k == "step")
      o.step = value.cast<int64_t>();
    else if (k == "factor")
      o.factor = value.cast<double>();
    else if (k == "stop_factor_lr")
      o.stop_factor_lr = value.cast<double>();
    else if (k == "steps")
      o.steps = value.cast<std::vector<int64_t>>();
    else if (k == "max_update")
      o.max_update = value.cast<int64_t>();
    else if (k == "final_lr")
      o.final_lr = value.cast<double>();
    else if (k == "pwr")
      o.pwr = value.cast<double>();
    else
      throw py::value_error("lr schedule: unknown option '" + k + "'");
  }
  return o;
}

}  // namespace

void RegisterOptimizer(py::module_& m) {
  m.def(
      "lr_schedule_rates",
      [](const std::string& kind, const py::dict& options, const std::vector<int64_t>& updates) {
        const auto schedule = LRScheduler::Create(kind, OptionsFromDict(options));
        std::vector<double> rates;
        for (int64_t n : updates) rates.push_back((*schedule)(n));
        return rates;
      },
      py::arg("kind"), py::arg("options"), py::arg("updates"));
}

}  // namespace cohort::python
