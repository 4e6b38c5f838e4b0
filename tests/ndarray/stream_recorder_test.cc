// The recorder's model of CUDA's ordering rules (Note [Stream ordering]): each rule, and each
// missing wait it must report.
#include "tests/ndarray/stream_recorder.h"

#include <gtest/gtest.h>

namespace cohort::testing {
namespace {

NDArray Array(float value) { return NDArray::Full({4}, value); }

TEST(StreamRecorder, OneStreamRunsInOrder) {
  StreamRecorder r;
  const auto s = r.NewStream(0);
  NDArray a = Array(0), b = Array(0);
  r.Kernel(s, "write a", {}, {a});
  r.CopyAsync(b, a, s);
  EXPECT_TRUE(r.Hazards().empty());
}

TEST(StreamRecorder, TwoStreamsNeedAnEvent) {
  NDArray a = Array(1), b = Array(0);
  for (bool wait : {false, true}) {
    StreamRecorder r;
    const auto producer = r.NewStream(0), consumer = r.NewStream(0);
    const auto written = r.NewEvent(0);
    r.Kernel(producer, "write a", {}, {a});
    r.Record(written, producer);
    if (wait) r.Wait(consumer, written);
    r.CopyAsync(b, a, consumer);
    EXPECT_EQ(r.Hazards().size(), wait ? 0u : 1u) << (wait ? "with" : "without") << " the wait";
  }
}

TEST(StreamRecorder, DefaultStreamOrdersBlockingStreamsOnly) {
  NDArray a = Array(1), b = Array(0);
  {
    StreamRecorder r;  // executor kernel, then a copy on the default stream: ordered
    r.Kernel(r.NewBlockingStream(0), "backward", {}, {a});
    r.CopyAsync(b, a, r.DefaultStream(0));
    r.Kernel(r.NewBlockingStream(0), "next forward", {b}, {});
    EXPECT_TRUE(r.Hazards().empty());
  }
  {
    StreamRecorder r;  // two blocking streams do not wait for each other
    r.Kernel(r.NewBlockingStream(0), "backward", {}, {a});
    r.Kernel(r.NewBlockingStream(0), "other", {a}, {});
    EXPECT_EQ(r.Hazards().size(), 1u);
  }
  {
    StreamRecorder r;  // nor does a non-blocking one, nor another device's default stream
    r.Kernel(r.NewBlockingStream(0), "backward", {}, {a});
    r.CopyAsync(b, a, r.NewStream(0));
    r.CopyAsync(b, a, r.DefaultStream(1));
    EXPECT_EQ(r.Hazards().size(), 3u);  // both copies race the kernel, and each other on b
  }
}

TEST(StreamRecorder, HostWaitsOnlyWhenTold) {
  NDArray device = Array(2), host = Array(0);
  for (bool wait : {false, true}) {
    StreamRecorder r;
    const auto s = r.NewStream(0);
    const auto copied = r.NewEvent(0);
    r.CopyAsync(host, device, s);
    r.Record(copied, s);
    if (wait) r.HostWait(copied);
    r.HostWork("metric", {host}, {});
    EXPECT_EQ(r.Hazards().size(), wait ? 0u : 1u);
  }
  // Work enqueued after host work follows it.
  StreamRecorder r;
  r.HostWork("fill", {}, {host});
  r.CopyAsync(device, host, r.NewStream(0));
  EXPECT_TRUE(r.Hazards().empty());
}

TEST(StreamRecorder, GroupedAllReduceSumsAndOrders) {
  StreamRecorder r;
  NDArray g0 = Array(1), g1 = Array(2), h0 = Array(10), h1 = Array(20);
  const auto c0 = r.NewStream(0), c1 = r.NewStream(1);
  r.GroupStart();
  r.AllReduce(g0, g0, c0);
  r.AllReduce(g1, g1, c1);
  r.AllReduce(h0, h0, c0);
  r.AllReduce(h1, h1, c1);
  r.GroupEnd();
  EXPECT_EQ(g0.ToVector<float>(), std::vector<float>(4, 3.0f));
  EXPECT_EQ(g1.ToVector<float>(), std::vector<float>(4, 3.0f));
  EXPECT_EQ(h1.ToVector<float>(), std::vector<float>(4, 30.0f));
  const std::vector<std::string> names = r.Names();
  ASSERT_EQ(names.size(), 4u);  // a part per collective and GPU
  EXPECT_EQ(names[0].substr(0, 14), "allreduce 0 on");
  EXPECT_TRUE(r.Hazards().empty());
  // Work after a collective on a GPU's stream follows that GPU's part only: GPU 0's stream may
  // use GPU 0's sums, GPU 1's stream may not (NCCL promises nothing about the other parts).
  r.Kernel(c0, "GPU 0 uses its sum", {g0, h0}, {});
  EXPECT_TRUE(r.Hazards().empty());
  r.Kernel(c1, "GPU 1 reads GPU 0's sum", {h0}, {});
  EXPECT_EQ(r.Hazards().size(), 1u);
}

TEST(StreamRecorder, CollectivesOfDifferentShapesAreRefused) {
  StreamRecorder r;
  r.GroupStart();
  r.AllReduce(Array(1), Array(1), r.NewStream(0));
  r.AllReduce(NDArray::Full({5}, 1.0), NDArray::Full({5}, 1.0), r.NewStream(1));
  EXPECT_THROW(r.GroupEnd(), Error);
}

}  // namespace
}  // namespace cohort::testing
