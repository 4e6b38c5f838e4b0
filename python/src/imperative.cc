// Operators run imperatively (cohort.nd.<op>, NDArray arithmetic): a one-op graph bound to the
// caller's arrays, the same kernels an executor runs.
#include <mutex>

#include "base/random_stream.h"
#include "executor/executor.h"
#include "python/src/bindings.h"

namespace cohort::python {
namespace {

// The one-op symbol of (op, attrs, number of inputs), made once: building a node parses its
// attributes, binding it each call plans one op's memory.
Symbol OneOpSymbol(const std::string& op, const op::Attrs& attrs, size_t num_inputs) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, op::Attrs, size_t>, Symbol> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_tuple(op, attrs, num_inputs);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const auto impl = op::OpRegistry::Get().Create(op, attrs);
  std::vector<std::string> slots = impl->ListArguments();
  for (const std::string& aux : impl->ListAuxiliaryStates()) slots.push_back(aux);
  if (num_inputs != slots.size()) {
    std::string names;
    for (const std::string& s : slots) names += (names.empty() ? "" : ", ") + s;
    throw py::type_error(op + " takes " + std::to_string(slots.size()) + " input array(s) (" +
                         names + "), " + std::to_string(num_inputs) + " given");
  }
  std::map<std::string, Symbol> inputs;
  for (const std::string& slot : slots) inputs[slot] = Symbol::Variable(slot);
  Symbol s = Symbol::Create(op, inputs, attrs, op);
  if (cache.size() > 4096) cache.clear();  // attributes vary without bound in a long script
  cache.emplace(std::move(key), s);
  return s;
}

// mx.random.seed's state: every random draw (a random op, Dropout) takes the next seed of the
// stream it starts, so the same seed gives the same numbers whatever else ran in between.
std::mutex random_mutex;
SeedStream random_stream;

uint64_t NextRandomSeed() {
  std::lock_guard<std::mutex> lock(random_mutex);
  return random_stream.Next();
}

bool DrawsRandomNumbers(const std::string& op) {
  const std::string& name = op::OpRegistry::Get().Canonical(op);
  return name.rfind("_random_", 0) == 0 || name == "Dropout";
}

// Runs `op` on `inputs` (its arguments, then its auxiliary states) on `ctx` (the inputs'
// context; given for ops with no inputs); returns its visible outputs as new arrays.
std::vector<NDArray> Invoke(const std::string& op, const std::vector<NDArray>& inputs,
                            const op::Attrs& attrs, const std::string& ctx, bool is_train) {
  const Symbol symbol = OneOpSymbol(op, attrs, inputs.size());
  const size_t num_args = symbol.ListArguments().size();
  const Context where = ContextFromText(ctx);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].is_none())
      throw py::value_error(op + ": input " + std::to_string(i) + " is none");
    if (!inputs[i].ctx().SameMemory(where)) {
      throw py::value_error(op + ": input " + std::to_string(i) + " is on " +
                            inputs[i].ctx().ToString() + ", the others on " + where.ToString());
    }
  }
  std::vector<NDArray> args(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(num_args));
  std::vector<NDArray> aux(inputs.begin() + static_cast<std::ptrdiff_t>(num_args), inputs.end());
  std::vector<NDArray> outputs;
  {
    py::gil_scoped_release release;
    auto exe = Executor::Bind(symbol, where, args, std::vector<NDArray>(args.size()),
                              std::vector<GradReq>(args.size(), GradReq::kNull), aux);
    if (DrawsRandomNumbers(op)) exe->set_random_seed(NextRandomSeed());
    exe->Forward(is_train);
    exe->WaitAll();
    outputs = exe->outputs();
  }
  return outputs;
}

}  // namespace

void RegisterImperative(py::module_& m) {
  m.def("random_seed", [](uint64_t seed) {
    std::lock_guard<std::mutex> lock(random_mutex);
    random_stream = SeedStream(seed);
  });
  m.def("invoke", &Invoke, py::arg("op"), py::arg("inputs"), py::arg("attrs"), py::arg("ctx"),
        py::arg("is_train") = false);
}

}  // namespace cohort::python
