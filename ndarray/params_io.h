// The MXNet NDArray list format (.params files of mx.nd.save / mx.nd.load), bit-compatible with
// MXNet 1.x in both directions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ndarray/ndarray.h"

namespace cohort {

// Note [MXNet .params format]
// All integers little-endian. A file is
//   uint64 0x112 (list magic), uint64 0 (reserved),
//   uint64 count, then `count` arrays,
//   uint64 name_count (0 for an unnamed list, else count), then each name as uint64 length + bytes.
// An array (MXNet's NDArray::Save) is
//   uint32 magic: 0xF993FAC9 (V2) or 0xF993FACA (V3, written under numpy shape semantics),
//   int32 storage type (0 dense; -1 for a none array; 1 row_sparse and 2 csr are refused here),
//   shape: int32 ndim, then ndim int64 dims,
//   and unless the array is none (V2: ndim 0; V3: ndim -1 or an unknown dim):
//   context: int32 dev_type, int32 dev_id; int32 type flag (DType); the elements, row-major.
// Older arrays are read too: V1 (magic 0xF993FAC8, then shape, context, type flag and data with no
// storage type) and the pre-V1 layout, whose first uint32 is the ndim itself followed by uint32
// dims. Names are free-form; MXNet's checkpoints use "arg:<name>" and "aux:<name>".

// V2 is what MXNet 1.x writes by default and loads outside numpy mode; V3 is needed for scalars
// (ndim 0). kAuto picks V2 unless an array is a scalar.
enum class ParamsFormat { kAuto, kV2, kV3 };

struct ParamsFile {
  std::vector<std::string> names;  // empty for an unnamed list, else one per array
  std::vector<NDArray> arrays;     // loaded arrays are on the CPU; a none array stays none
  // Loaded files only: per array, whether it was written under numpy shape semantics (V3), which
  // MXNet's loader requires to match the reader's mode (the Python package checks it).
  std::vector<bool> numpy_shape;
};

// Writes atomically (a temporary file renamed over `path`). Arrays on a GPU are copied to host.
void SaveParams(const std::string& path, const std::map<std::string, NDArray>& arrays,
                ParamsFormat format = ParamsFormat::kAuto);
void SaveParamsFile(const std::string& path, const ParamsFile& file,
                    ParamsFormat format = ParamsFormat::kAuto);
std::string SerializeParams(const ParamsFile& file, ParamsFormat format = ParamsFormat::kAuto);

// A truncated, corrupt or foreign file throws cohort::Error naming the file, the array index and
// what was wrong; sizes are checked against the bytes left before anything is allocated.
ParamsFile LoadParamsFile(const std::string& path);
// Requires names, each appearing once.
std::map<std::string, NDArray> LoadParams(const std::string& path);
// The same from bytes in memory; `source` names them in errors.
ParamsFile ParseParams(std::string_view bytes, const std::string& source);

// One array alone, as MXNet's NDArray::Save writes it (MXNDArraySaveRawBytes: the bytes pickled
// NDArrays carry), and back; ParseArray requires the bytes to hold exactly one array.
std::string SerializeArray(const NDArray& array, ParamsFormat format = ParamsFormat::kAuto);
NDArray ParseArray(std::string_view bytes, const std::string& source, bool* numpy_shape = nullptr);

}  // namespace cohort
