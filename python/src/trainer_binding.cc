// The training engine cohort-train runs, for Module.fit (Note [One engine]): a Trainer that
// adopts the Module's manager and runs Fit with the GIL released, calling back into Python at
// batch and epoch ends.
#include "python/src/bindings.h"
#include "python/src/io_convert.h"
#include "trainer/trainer.h"

namespace cohort::python {
namespace {

// Note [One engine]
// Module.fit, where everything it is given has a C++ counterpart (a native iterator, native
// metrics, an optimizer and learning-rate schedule Cohort has in C++, a kvstore kind), runs
// cohort-train's loop: Trainer::Fit over the Module's own manager, with its overlapped
// gradient buckets, agreement checks and non-finite handling. Module.init_params has set the
// parameters (keep_params); the callbacks get MXNet's arguments from the Python side. Anything
// else (a Python optimizer or metric, a monitor) runs MXNet's Python loop over the same C++
// steps (python/cohort/module/base_module.py).
FitConfig FitConfigFromPython(const py::dict& d) {
  FitConfig c;
  c.keep_params = true;
  c.log_every = 0;
  c.log_epochs = false;
  c.progress = false;
  c.stop_on_signal = false;  // Python's own SIGINT: KeyboardInterrupt at the next callback
  c.epochs = d["epochs"].cast<int>();
  c.begin_epoch = d["begin_epoch"].cast<int>();
  c.update_on_kvstore = d["update_on_kvstore"].cast<bool>();
  c.seed = d["seed"].cast<uint64_t>();
  c.metrics = d["metrics"].cast<std::vector<std::string>>();
  // Bucketed text: the padding's label, which the metrics and the token count leave out.
  if (d.contains("ignore_label")) c.ignore_label = d["ignore_label"].cast<int64_t>();
  c.count_tokens = d.contains("count_tokens") && d["count_tokens"].cast<bool>();
  c.optimizer = d["optimizer"].cast<std::string>();
  OptimizerOptions& o = c.optimizer_options;
  o = OptimizerOptions::DefaultsFor(c.optimizer);
  // The optimizer's declared settings (Note [Declared options]), numbers from Python: true and
  // false arrive as 1 and 0.
  const OptionTable<OptimizerOptions>& table = OptimizerOptions::Table();
  Options given("optimizer_params");
  for (const auto& [key, value] : d["optimizer_options"].cast<std::map<std::string, double>>()) {
    if (table.TypeOf(key) == "bool") {
      given.Set(key, value != 0);
    } else {
      given.Set(key, value);
    }
  }
  table.Read(given, &o);
  if (given.Has("rescale_grad")) c.rescale_grad = o.rescale_grad;
  c.lr_schedule = d["lr_schedule"].cast<std::string>();
  const py::dict s = d["schedule"].cast<py::dict>();
  LRScheduler::Options& sch = c.schedule;
  if (s.contains("step")) sch.step = s["step"].cast<int64_t>();
  if (s.contains("factor")) sch.factor = s["factor"].cast<double>();
  if (s.contains("stop_factor_lr")) sch.stop_factor_lr = s["stop_factor_lr"].cast<double>();
  if (s.contains("steps")) sch.steps = s["steps"].cast<std::vector<int64_t>>();
  if (s.contains("max_update")) sch.max_update = s["max_update"].cast<int64_t>();
  if (s.contains("final_lr")) sch.final_lr = s["final_lr"].cast<double>();
  if (s.contains("pwr")) sch.pwr = s["pwr"].cast<double>();
  if (s.contains("warmup_steps")) sch.warmup_steps = s["warmup_steps"].cast<int64_t>();
  if (s.contains("warmup_begin_lr")) sch.warmup_begin_lr = s["warmup_begin_lr"].cast<double>();
  return c;
}

py::dict EpochToPython(const EpochResult& r) {
  py::dict d;
  d["epoch"] = r.epoch;
  d["train"] = r.train;
  d["val"] = r.val;
  d["samples_per_sec"] = r.samples_per_sec;
  d["tokens_per_sec"] = r.tokens_per_sec;  // 0 unless count_tokens
  d["seconds"] = r.seconds;
  return d;
}

}  // namespace

void RegisterTrainer(py::module_& m) {
  m.def(
      "optimizer_option_keys", [] { return OptimizerOptions::Table().Keys(); },
      "The settings the C++ optimizers take (OptimizerOptions::Table)");
  py::class_<Trainer>(m, "TrainerHandle")
      .def(py::init([](const Symbol& symbol, const std::vector<std::string>& contexts,
                       const std::vector<double>& work_load, const std::string& kvstore) {
             std::vector<Context> ctx;
             for (const std::string& c : contexts) ctx.push_back(ContextFromText(c));
             return std::make_unique<Trainer>(symbol, ctx, work_load,
                                              std::shared_ptr<KVStore>(KVStore::Create(kvstore)));
           }),
           py::arg("symbol"), py::arg("contexts"), py::arg("work_load"), py::arg("kvstore"))
      .def(
          "adopt",
          [](Trainer& t, std::shared_ptr<DataParallelExecutorManager> manager,
             const py::list& data_shapes, const std::vector<std::string>& param_names) {
            t.Adopt(std::move(manager), DescsFromPython(data_shapes), param_names);
          },
          py::arg("manager"), py::arg("data_shapes"), py::arg("param_names"))
      .def(
          "fit",
          [](Trainer& t, DataIter& train, DataIter* val, const py::dict& config,
             std::shared_ptr<EvalMetric> train_metric, std::shared_ptr<EvalMetric> val_metric,
             py::object on_batch_end, py::object on_epoch) {
            const FitConfig c = FitConfigFromPython(config);
            FitHooks hooks;
            hooks.train_metric = std::move(train_metric);
            hooks.val_metric = std::move(val_metric);
            // Called on this thread with the GIL released: take it back for Python, and let
            // a Python exception (a failing callback, KeyboardInterrupt) unwind the loop.
            if (!on_batch_end.is_none()) {
              hooks.on_batch_end = [&on_batch_end](int epoch, int64_t nbatch) {
                py::gil_scoped_acquire gil;
                on_batch_end(epoch, nbatch);
              };
            }
            std::function<void(const EpochResult&)> epoch_end;
            if (!on_epoch.is_none()) {
              epoch_end = [&on_epoch](const EpochResult& r) {
                py::gil_scoped_acquire gil;
                on_epoch(EpochToPython(r));
              };
            }
            py::gil_scoped_release release;
            t.Fit(train, val, c, epoch_end, hooks);
          },
          py::arg("train"), py::arg("val").none(true), py::arg("config"),
          py::arg("train_metric").none(true), py::arg("val_metric").none(true),
          py::arg("on_batch_end").none(true), py::arg("on_epoch").none(true))
      .def(
          "save_optimizer_states",
          [](const Trainer& t, const std::string& path) {
            const Optimizer* o = t.optimizer();
            if (!o) throw py::value_error("save_optimizer_states: the trainer has not fit yet");
            o->SaveStates(path);
          },
          py::arg("path"))
      .def_property_readonly("skipped_steps", &Trainer::skipped_steps)
      .def_property_readonly("num_workers", [](Trainer& t) { return t.kvstore().num_workers(); });
}

}  // namespace cohort::python
