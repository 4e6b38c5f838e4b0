// Text generation from Python (cohort.generation): cohort-generate's TextGenerator, so that a
// script and the command draw the same bytes for the same seed (Note [Text generation]).
#include <pybind11/numpy.h>

#include "apps/text_generator.h"
#include "python/src/bindings.h"

namespace cohort::python {

void RegisterGeneration(py::module_& m) {
  py::class_<TextGenerator>(m, "TextGeneratorHandle")
      .def(py::init([](const Symbol& symbol, const std::map<std::string, NDArray>& arg_params,
                       const std::map<std::string, NDArray>& aux_params, const std::string& ctx,
                       int64_t context, bool kv_cache) {
             py::gil_scoped_release release;
             return std::make_unique<TextGenerator>(symbol, arg_params, aux_params,
                                                    ContextFromText(ctx), context, kv_cache);
           }),
           py::arg("symbol"), py::arg("arg_params"), py::arg("aux_params"), py::arg("ctx"),
           py::arg("context"), py::arg("kv_cache"))
      .def_property_readonly("uses_kv_cache", &TextGenerator::uses_kv_cache)
      .def_property_readonly("context", &TextGenerator::context)
      .def_property_readonly("vocab", &TextGenerator::vocab)
      .def(
          "next_probabilities",
          [](TextGenerator& g, const std::vector<int64_t>& tokens) {
            std::vector<float> p;
            {
              py::gil_scoped_release release;
              p = g.NextProbabilities(tokens);
            }
            return py::array_t<float>(static_cast<py::ssize_t>(p.size()), p.data());
          },
          py::arg("tokens"))
      .def(
          "generate",
          [](TextGenerator& g, const py::bytes& prompt, int64_t length, double temperature,
             int64_t top_k, double top_p, uint64_t seed, py::object on_byte) {
            std::function<void(char)> each;
            if (!on_byte.is_none()) {  // called with the GIL held: the loop keeps it
              each = [&](char byte) { on_byte(py::bytes(&byte, 1)); };
            }
            const std::string text = g.Generate(
                std::string(prompt), length,
                {.temperature = temperature, .top_k = top_k, .top_p = top_p}, seed, each);
            return py::bytes(text);
          },
          py::arg("prompt"), py::arg("length"), py::arg("temperature"), py::arg("top_k"),
          py::arg("top_p"), py::arg("seed"), py::arg("on_byte"));
}

}  // namespace cohort::python
