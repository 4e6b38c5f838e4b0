// Data iterators of the C++ core (NDArrayIter, MNISTIter, CSVIter) and the DataDesc/DataBatch
// conversions the Python io module and the executor manager share.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <map>

#include "io/csv_iter.h"
#include "io/image_record_iter.h"
#include "io/mnist_iter.h"
#include "io/ndarray_iter.h"
#include "io/prefetching_iter.h"
#include "python/src/bindings.h"
#include "python/src/io_convert.h"

namespace cohort::python {

py::tuple DescToPython(const DataDesc& d) {
  return py::make_tuple(d.name, ShapeToPython(d.shape), std::string(DTypeName(d.dtype)), d.layout);
}

DataDesc DescFromPython(const py::handle& value) {
  const auto t = value.cast<py::tuple>();
  if (t.size() != 4) throw py::value_error("a DataDesc travels as (name, shape, dtype, layout)");
  DataDesc d;
  d.name = t[0].cast<std::string>();
  d.shape = ShapeFromPython(t[1], "DataDesc '" + d.name + "'");
  d.dtype = ParseDType(t[2].cast<std::string>());
  d.layout = t[3].cast<std::string>();
  return d;
}

std::vector<DataDesc> DescsFromPython(const py::list& values) {
  std::vector<DataDesc> out;
  for (const py::handle v : values) out.push_back(DescFromPython(v));
  return out;
}

namespace {

py::list Descs(const std::vector<DataDesc>& descs) {
  py::list out;
  for (const DataDesc& d : descs) out.append(DescToPython(d));
  return out;
}

BatchOptions Options(int64_t batch_size, bool shuffle, uint64_t seed,
                     const std::string& last_batch_handle) {
  if (batch_size <= 0) {
    throw py::value_error("batch_size: expected an int >= 1, got " + std::to_string(batch_size));
  }
  return BatchOptions{.batch_size = batch_size,
                      .shuffle = shuffle,
                      .seed = seed,
                      .last_batch = ParseLastBatchHandle(last_batch_handle)};
}

}  // namespace

void RegisterIO(py::module_& m) {
  py::class_<DataIter>(m, "DataIterHandle")
      .def("reset", &DataIter::Reset, py::call_guard<py::gil_scoped_release>())
      .def("next", &DataIter::Next, py::call_guard<py::gil_scoped_release>())
      // The current batch: (data, label, pad, index, bucket_key). Its arrays are reused by the
      // next batch: the Python side copies what it hands out.
      .def("value",
           [](const DataIter& it) {
             const DataBatch& b = it.Value();
             return py::make_tuple(b.data, b.label, b.pad, b.index,
                                   b.bucket_key ? py::cast(*b.bucket_key) : py::none());
           })
      .def_property_readonly("provide_data",
                             [](const DataIter& it) { return Descs(it.provide_data()); })
      .def_property_readonly("provide_label",
                             [](const DataIter& it) { return Descs(it.provide_label()); })
      .def_property_readonly("batch_size", &DataIter::batch_size)
      .def_property_readonly("order", [](const DataIter& it) -> py::object {
        const auto* batched = dynamic_cast<const BatcherIter*>(&it);
        if (!batched) return py::none();
        return py::array_t<int64_t>(static_cast<py::ssize_t>(batched->order().size()),
                                    batched->order().data());
      });

  m.def(
      "ndarray_iter",
      [](const std::vector<std::pair<std::string, NDArray>>& data,
         const std::vector<std::pair<std::string, NDArray>>& label, int64_t batch_size,
         bool shuffle, uint64_t seed, const std::string& last_batch_handle) {
        return std::unique_ptr<DataIter>(std::make_unique<NDArrayIter>(
            data, label, Options(batch_size, shuffle, seed, last_batch_handle)));
      },
      py::arg("data"), py::arg("label"), py::arg("batch_size"), py::arg("shuffle"), py::arg("seed"),
      py::arg("last_batch_handle"));
  m.def(
      "mnist_iter",
      [](const std::string& image, const std::string& label, bool flat, int64_t batch_size,
         bool shuffle, uint64_t seed, const std::string& data_name, const std::string& label_name,
         int num_parts, int part_index, int prefetch_buffer, bool reshuffle_each_epoch,
         const std::string& sharding) {
        if (sharding != "parts" && sharding != "global_batch") {
          throw py::value_error("MNISTIter: sharding '" + sharding +
                                "': expected 'parts' or 'global_batch'");
        }
        if (num_parts < 1 || part_index < 0 || part_index >= num_parts) {
          throw py::value_error("MNISTIter: part_index " + std::to_string(part_index) +
                                " of num_parts " + std::to_string(num_parts) +
                                ": expected 0 <= part_index < num_parts");
        }
        if (prefetch_buffer < 0) {
          throw py::value_error("MNISTIter: prefetch_buffer " + std::to_string(prefetch_buffer) +
                                " is negative");
        }
        MNISTIterOptions o;
        o.image = image;
        o.label = label;
        o.flat = flat;
        o.data_name = data_name;
        o.label_name = label_name;
        o.batch = Options(batch_size, shuffle, seed, "pad");
        o.batch.reshuffle_each_epoch = reshuffle_each_epoch;  // MXNet's keeps its one order
        if (num_parts > 1) {  // MXNet's parts: contiguous shares of the file; or Note [Sharding]
          o.batch.num_parts = num_parts;
          o.batch.part_index = part_index;
          o.batch.sharding = sharding == "parts" ? BatchOptions::Sharding::kParts
                                                 : BatchOptions::Sharding::kGlobalBatch;
        }
        py::gil_scoped_release release;
        std::unique_ptr<DataIter> iter = std::make_unique<MNISTIter>(o);
        // As MXNet's, batches are made a few ahead on a thread of their own.
        if (prefetch_buffer > 0) {
          iter = std::make_unique<PrefetchingIter>(std::move(iter), prefetch_buffer);
        }
        return iter;
      },
      py::arg("image"), py::arg("label"), py::arg("flat"), py::arg("batch_size"),
      py::arg("shuffle"), py::arg("seed"), py::arg("data_name"), py::arg("label_name"),
      py::arg("num_parts"), py::arg("part_index"), py::arg("prefetch_buffer"),
      py::arg("reshuffle_each_epoch"), py::arg("sharding"));
  m.def(
      "csv_iter",
      [](const std::string& data_csv, const py::handle& data_shape, const std::string& label_csv,
         const py::handle& label_shape, int64_t batch_size, bool shuffle, uint64_t seed,
         const std::string& last_batch_handle, const std::string& data_name,
         const std::string& label_name, const std::string& dtype) {
        CSVIterOptions o;
        o.dtype = ParseDType(dtype);
        o.data_csv = data_csv;
        o.data_shape = ShapeFromPython(data_shape, "data_shape");
        o.label_csv = label_csv;
        o.label_shape = ShapeFromPython(label_shape, "label_shape");
        o.data_name = data_name;
        o.label_name = label_name;
        o.batch = Options(batch_size, shuffle, seed, last_batch_handle);
        py::gil_scoped_release release;
        return std::unique_ptr<DataIter>(std::make_unique<CSVIter>(o));
      },
      py::arg("data_csv"), py::arg("data_shape"), py::arg("label_csv"), py::arg("label_shape"),
      py::arg("batch_size"), py::arg("shuffle"), py::arg("seed"), py::arg("last_batch_handle"),
      py::arg("data_name"), py::arg("label_name"), py::arg("dtype"));
  // MXNet's ImageRecordIter keywords, checked and converted by cohort.io.ImageRecordIter.
  m.def(
      "image_record_iter",
      [](const std::string& path_imgrec, const std::string& path_imgidx,
         const std::vector<int64_t>& data_shape, int64_t batch_size, int64_t resize, bool rand_crop,
         bool rand_mirror, const std::vector<float>& mean, const std::vector<float>& std,
         float scale, bool shuffle, uint64_t seed, int64_t label_width, int preprocess_threads,
         bool round_batch, int num_parts, int part_index, const std::string& mean_img,
         int64_t seed_aug, const std::map<std::string, double>& augment, int64_t decode_budget_mb) {
        COHORT_CHECK(data_shape.size() == 3 && mean.size() == 3 && std.size() == 3)
            << "ImageRecordIter: data_shape, mean and std take 3 values";
        ImageRecordIterOptions o;
        o.path_imgrec = path_imgrec;
        o.path_imgidx = path_imgidx;
        std::copy(data_shape.begin(), data_shape.end(), o.data_shape.begin());
        o.batch_size = batch_size;
        o.resize = resize;
        o.rand_crop = rand_crop;
        o.rand_mirror = rand_mirror;
        std::copy(mean.begin(), mean.end(), o.mean.begin());
        std::copy(std.begin(), std.end(), o.std.begin());
        o.scale = scale;
        o.shuffle = shuffle;
        o.seed = seed;
        o.label_width = label_width;
        o.preprocess_threads = preprocess_threads;
        o.decode_budget_mb = decode_budget_mb;  // Note [Decode budget]
        o.last_batch = round_batch ? LastBatchHandle::kPad : LastBatchHandle::kDiscard;
        o.num_parts = num_parts;
        o.part_index = part_index;
        o.mean_img = mean_img;
        o.seed_aug = seed_aug;
        ImageAugmentOptions& a = o.augment;
        const std::map<std::string, float*> floats = {
            {"max_rotate_angle", &a.max_rotate_angle},
            {"rotate", &a.rotate},
            {"max_shear_ratio", &a.max_shear_ratio},
            {"max_random_scale", &a.max_random_scale},
            {"min_random_scale", &a.min_random_scale},
            {"max_aspect_ratio", &a.max_aspect_ratio},
            {"max_img_size", &a.max_img_size},
            {"min_img_size", &a.min_img_size},
            {"max_random_contrast", &a.max_random_contrast},
            {"max_random_illumination", &a.max_random_illumination}};
        const std::map<std::string, int*> ints = {{"fill_value", &a.fill_value},
                                                  {"random_h", &a.random_h},
                                                  {"random_s", &a.random_s},
                                                  {"random_l", &a.random_l}};
        for (const auto& [key, value] : augment) {
          if (auto f = floats.find(key); f != floats.end()) {
            *f->second = static_cast<float>(value);
          } else if (auto i = ints.find(key); i != ints.end()) {
            COHORT_CHECK(value == std::floor(value) && std::fabs(value) < 1e6)
                << "ImageRecordIter: " << key << " must be an integer, got " << value;
            *i->second = static_cast<int>(value);
          } else {
            COHORT_THROW() << "ImageRecordIter: unknown augmenter '" << key << "'";
          }
        }
        py::gil_scoped_release release;
        return std::unique_ptr<DataIter>(std::make_unique<ImageRecordIter>(o));
      },
      py::arg("path_imgrec"), py::arg("path_imgidx"), py::arg("data_shape"), py::arg("batch_size"),
      py::arg("resize"), py::arg("rand_crop"), py::arg("rand_mirror"), py::arg("mean"),
      py::arg("std"), py::arg("scale"), py::arg("shuffle"), py::arg("seed"), py::arg("label_width"),
      py::arg("preprocess_threads"), py::arg("round_batch"), py::arg("num_parts"),
      py::arg("part_index"), py::arg("mean_img"), py::arg("seed_aug"), py::arg("augment"),
      py::arg("decode_budget_mb"));
}

}  // namespace cohort::python
