#include "executor_manager/input_staging.h"

#include "base/error.h"

namespace cohort {

InputStaging::InputStaging(StreamOps& ops, std::vector<int> devices,
                           std::vector<std::vector<NDArray>> inputs,
                           std::vector<std::pair<int64_t, int64_t>> slices, Context host_ctx)
    : ops_(ops),
      devices_(std::move(devices)),
      inputs_(std::move(inputs)),
      slices_(std::move(slices)),
      host_ctx_(host_ctx) {
  COHORT_CHECK(inputs_.size() == devices_.size() && slices_.size() == devices_.size())
      << "InputStaging: " << devices_.size() << " devices, " << inputs_.size()
      << " input lists and " << slices_.size() << " slices";
  for (int device : devices_) copy_streams_.push_back(ops_.NewStream(device));
  const int64_t rows = slices_.empty() ? 0 : slices_.back().second;
  for (Slot& slot : slots_) {
    // The whole batch in the inputs' dtype: the host copy casts, so the device copies need not.
    for (const NDArray& input : inputs_.empty() ? std::vector<NDArray>{} : inputs_[0]) {
      slot.host.push_back(NDArray::Empty(input.shape().WithDim0(rows), input.dtype(), host_ctx_));
    }
    for (size_t d = 0; d < devices_.size(); ++d) {
      slot.copied.push_back(ops_.NewEvent(devices_[d]));
      slot.consumed.push_back(ops_.NewEvent(devices_[d]));
      std::vector<NDArray> device_slot;
      for (const NDArray& input : inputs_[d]) {
        device_slot.push_back(NDArray::Empty(input.shape(), input.dtype(), input.ctx()));
      }
      slot.device.push_back(std::move(device_slot));
    }
  }
}

InputStaging::~InputStaging() {
  try {
    // The device slots go back to the pool: no copy into them (copied) or out of them into the
    // executors' inputs (consumed) may still run.
    for (Slot& slot : slots_) {
      for (const StreamOps::Event& copied : slot.copied) ops_.HostWait(copied);
      for (const StreamOps::Event& consumed : slot.consumed) ops_.HostWait(consumed);
    }
  } catch (const std::exception&) {  // a failed device: nothing left to wait for
  }
}

void InputStaging::Stage(const std::vector<NDArray>& arrays) {
  COHORT_CHECK(staged_ < 0) << "InputStaging: a batch is staged already; load it first";
  const size_t num_inputs = inputs_.empty() ? 0 : inputs_[0].size();
  COHORT_CHECK_EQ(arrays.size(), num_inputs) << "InputStaging: arrays in the staged batch";
  Slot& slot = slots_[next_];
  // The pinned slot is free once the copies of its last batch have run. (Waiting for an event
  // never recorded returns at once, in CUDA as in the recorder.)
  for (const StreamOps::Event& copied : slot.copied) ops_.HostWait(copied);
  for (size_t i = 0; i < arrays.size(); ++i) {
    COHORT_CHECK(arrays[i].shape() == slot.host[i].shape())
        << "InputStaging: input " << i << " of the batch has shape " << arrays[i].shape()
        << ", the bound batch " << slot.host[i].shape();
    ops_.HostCopy(slot.host[i], arrays[i]);
  }
  for (size_t d = 0; d < devices_.size(); ++d) {
    // The device slot is free once load k - 1 copied it into the inputs.
    ops_.Wait(copy_streams_[d], slot.consumed[d]);
    const auto [begin, end] = slices_[d];
    for (size_t i = 0; i < arrays.size(); ++i) {
      ops_.CopyAsync(slot.device[d][i], slot.host[i].Slice(begin, end), copy_streams_[d]);
    }
    ops_.Record(slot.copied[d], copy_streams_[d]);
  }
  staged_ = next_;
  next_ = 1 - next_;
}

void InputStaging::Load() {
  COHORT_CHECK(staged_ >= 0) << "InputStaging: no batch staged";
  Slot& slot = slots_[staged_];
  for (size_t d = 0; d < devices_.size(); ++d) {
    const StreamOps::Stream stream = ops_.DefaultStream(devices_[d]);
    ops_.Wait(stream, slot.copied[d]);
    for (size_t i = 0; i < inputs_[d].size(); ++i) {
      ops_.CopyAsync(inputs_[d][i], slot.device[d][i], stream);
    }
    ops_.Record(slot.consumed[d], stream);
  }
  staged_ = -1;
}

}  // namespace cohort
