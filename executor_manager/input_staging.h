// InputStaging: the pinned, double-buffered copy of batches into the executors' inputs on GPUs
// (Note [Input staging]).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ndarray/stream_ops.h"

namespace cohort {

// Note [Input staging]
// A synchronous copy from pageable host memory into a GPU input waits for the step before it and
// stalls the host while it runs, so the GPU idles between steps. Instead, as MXNet's fit loop
// prepares the next batch while the current step still runs, the batch k + 1 is staged while step
// k computes: the host copies it into pinned slot (k + 1) % 2, the device's copy stream copies
// that into device slot (k + 1) % 2 and records `copied`; loading it (after step k was enqueued)
// makes the default stream wait for `copied`, copies the device slot into the bound inputs there
// (a device-to-device copy, ordered after step k's kernels that read them, Note [GPU streams])
// and records `consumed`. Before a slot is written again the host waits for its `copied` (the
// pinned memory is free) and the copy stream waits for its `consumed` (the device slot is free).
// Two slots suffice: slot k % 2 is read by load k while slot (k + 1) % 2 fills. Nothing is
// allocated after the first two batches.
class InputStaging {
 public:
  // inputs[d][i]: device d's bound input i (data inputs, then labels), on GPU devices[d], rows
  // slices[d] of the batch; host_ctx: where the host slots live (pinned memory on a GPU machine).
  InputStaging(StreamOps& ops, std::vector<int> devices, std::vector<std::vector<NDArray>> inputs,
               std::vector<std::pair<int64_t, int64_t>> slices, Context host_ctx);
  // Waits for copies still running from the slots (a discarded batch's) before freeing them.
  ~InputStaging();
  InputStaging(const InputStaging&) = delete;
  InputStaging& operator=(const InputStaging&) = delete;

  // Starts copying a batch (arrays[i]: input i of the whole batch, on the host) towards the
  // devices and returns; the arrays may change once it returns.
  void Stage(const std::vector<NDArray>& arrays);
  // Makes the inputs hold the staged batch for all GPU work enqueued after this call.
  void Load();
  // Forgets the staged batch (its copies may still run; the slot is reused safely later).
  void Discard() { staged_ = -1; }
  bool staged() const { return staged_ >= 0; }

 private:
  struct Slot {
    std::vector<NDArray> host;                 // [input], the whole batch, in the inputs' dtype
    std::vector<std::vector<NDArray>> device;  // [device][input], that device's rows
    std::vector<StreamOps::Event> copied, consumed;
  };

  StreamOps& ops_;
  std::vector<int> devices_;
  std::vector<std::vector<NDArray>> inputs_;
  std::vector<std::pair<int64_t, int64_t>> slices_;
  Context host_ctx_;
  std::vector<StreamOps::Stream> copy_streams_;
  Slot slots_[2];
  int next_ = 0;     // the slot the next Stage fills
  int staged_ = -1;  // the slot staged and not yet loaded
};

}  // namespace cohort
