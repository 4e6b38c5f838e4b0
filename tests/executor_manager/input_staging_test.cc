// InputStaging's order (Note [Input staging]) under CUDA's ordering rules, on CPU (Note [Stream
// ordering]): the trainer's loop over five batches on two GPUs, with the next batch staged while
// each step's kernels read the inputs, is free of races and every step sees its own batch.
#include "executor_manager/input_staging.h"

#include <gtest/gtest.h>

#include "tests/ndarray/stream_recorder.h"

namespace cohort {
namespace {

using testing::StreamRecorder;

constexpr int kSteps = 5;

// Batch k: data rows of 2 values and one label per row, 4 rows, every value 100k + row.
std::vector<NDArray> Batch(int k) {
  std::vector<float> data, label;
  for (int row = 0; row < 4; ++row) {
    data.insert(data.end(), 2, static_cast<float>(100 * k + row));
    label.push_back(static_cast<float>(100 * k + row));
  }
  return {NDArray::FromVector<float>({4, 2}, data), NDArray::FromVector<float>({4}, label)};
}

// Runs the loop; `executor_stream` makes each GPU's executor stream (blocking, as
// GpuResources makes them); with `metric`, the host waits for each step's outputs (as the
// trainer's metric does), else for none: the staging's own waits must order the slots then.
// Returns the races found; `seen[k][d]` is what step k's kernel read.
std::vector<std::string> RunLoop(
    const std::function<StreamOps::Stream(StreamRecorder&, int)>& executor_stream, bool metric,
    std::vector<std::vector<std::vector<float>>>* seen) {
  StreamRecorder r;
  const std::vector<std::pair<int64_t, int64_t>> slices = {{0, 1}, {1, 4}};  // unequal work load
  std::vector<std::vector<NDArray>> inputs(2);
  for (size_t d = 0; d < 2; ++d) {
    const int64_t rows = slices[d].second - slices[d].first;
    inputs[d] = {NDArray::Zeros({rows, 2}), NDArray::Zeros({rows})};
  }
  InputStaging staging(r, {0, 1}, inputs, slices, Context::CPU());
  std::vector<StreamOps::Stream> executors = {executor_stream(r, 0), executor_stream(r, 1)};
  std::vector<NDArray> outputs = {NDArray::Zeros({1, 2}), NDArray::Zeros({3, 2})};
  std::vector<NDArray> iterator_slot = Batch(0);  // the iterator's arrays, reused per batch
  staging.Stage(iterator_slot);
  seen->assign(kSteps, std::vector<std::vector<float>>(2));
  for (int k = 0; k < kSteps; ++k) {
    staging.Load();
    for (size_t d = 0; d < 2; ++d) {  // forward and backward: read the inputs
      r.Kernel(executors[d], "step " + std::to_string(k), {inputs[d][0], inputs[d][1]},
               {outputs[d]}, [&, d] {
                 (*seen)[k][d] = inputs[d][0].ToVector<float>();
                 inputs[d][0].CopyTo(outputs[d]);
               });
    }
    if (k + 1 < kSteps) {
      // The iterator moves on: its arrays now hold batch k + 1, then are staged.
      Batch(k + 1)[0].CopyTo(iterator_slot[0]);
      Batch(k + 1)[1].CopyTo(iterator_slot[1]);
      r.HostWork("iterator", {}, iterator_slot);
      staging.Stage(iterator_slot);
    }
    // The metric copies the outputs to the host (a copy on the default stream the host waits
    // for, as NDArray::CopyTo does).
    for (size_t d = 0; d < 2 && metric; ++d) {
      const auto copied = r.NewEvent(static_cast<int>(d));
      NDArray host = NDArray::Zeros(outputs[d].shape());
      r.CopyAsync(host, outputs[d], r.DefaultStream(static_cast<int>(d)));
      r.Record(copied, r.DefaultStream(static_cast<int>(d)));
      r.HostWait(copied);
      r.HostWork("metric", {host}, {});
    }
  }
  return r.Hazards();
}

TEST(InputStaging, NextBatchStagedDuringStepHasNoRace) {
  for (bool metric : {true, false}) {
    SCOPED_TRACE(metric ? "the host waits every step" : "the host never waits");
    std::vector<std::vector<std::vector<float>>> seen;
    const std::vector<std::string> hazards = RunLoop(
        [](StreamRecorder& r, int device) { return r.NewBlockingStream(device); }, metric, &seen);
    ASSERT_TRUE(hazards.empty()) << hazards.size() << " races, the first: " << hazards.front();
    for (int k = 0; k < kSteps; ++k) {
      const float base = static_cast<float>(100 * k);
      EXPECT_EQ(seen[k][0], (std::vector<float>{base, base})) << "step " << k << ", GPU 0";
      EXPECT_EQ(seen[k][1],
                (std::vector<float>{base + 1, base + 1, base + 2, base + 2, base + 3, base + 3}))
          << "step " << k << ", GPU 1";
    }
  }
}

// Executors on non-blocking streams would not be ordered with the loads into their inputs: the
// checker sees those races (Note [GPU streams] is why the executors' streams are blocking).
TEST(InputStaging, ExecutorsOnNonBlockingStreamsWouldRace) {
  std::vector<std::vector<std::vector<float>>> seen;
  const std::vector<std::string> hazards =
      RunLoop([](StreamRecorder& r, int device) { return r.NewStream(device); }, true, &seen);
  EXPECT_FALSE(hazards.empty());
}

TEST(InputStaging, RejectsABatchOfAnotherShape) {
  StreamRecorder r;
  InputStaging staging(r, {0}, {{NDArray::Zeros({4, 2}), NDArray::Zeros({4})}}, {{0, 4}},
                       Context::CPU());
  staging.Stage(Batch(0));
  staging.Load();
  EXPECT_THROW(staging.Stage({NDArray::Zeros({4, 3}), NDArray::Zeros({4})}), Error);
  EXPECT_THROW(staging.Load(), Error);  // nothing staged
}

}  // namespace
}  // namespace cohort
