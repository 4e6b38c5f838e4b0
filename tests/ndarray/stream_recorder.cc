#include "tests/ndarray/stream_recorder.h"

#include <algorithm>
#include <sstream>

#include "base/error.h"

namespace cohort::testing {

StreamOps::Stream StreamRecorder::Add(Kind kind, int device) {
  const uintptr_t handle = next_handle_++;
  streams_[handle] = {kind, device};
  return {reinterpret_cast<void*>(handle), device};
}

StreamOps::Stream StreamRecorder::DefaultStream(int device) {
  auto it = legacy_.find(device);
  if (it == legacy_.end()) {
    const Stream stream = Add(Kind::kLegacy, device);
    it = legacy_.emplace(device, reinterpret_cast<uintptr_t>(stream.handle)).first;
  }
  return {reinterpret_cast<void*>(it->second), device};
}

StreamOps::Stream StreamRecorder::NewStream(int device) { return Add(Kind::kNonBlocking, device); }
StreamOps::Stream StreamRecorder::NewBlockingStream(int device) {
  return Add(Kind::kBlocking, device);
}

StreamOps::Event StreamRecorder::NewEvent(int device) {
  const uintptr_t handle = next_handle_++;
  events_[handle] = -1;
  return {reinterpret_cast<void*>(handle), device};
}

std::string StreamRecorder::StreamName(Stream stream) const {
  const StreamState& s = streams_.at(reinterpret_cast<uintptr_t>(stream.handle));
  const char* kind = s.kind == Kind::kLegacy     ? "default"
                     : s.kind == Kind::kBlocking ? "blocking"
                                                 : "stream";
  std::ostringstream out;
  out << kind << reinterpret_cast<uintptr_t>(stream.handle) << "@" << s.device;
  return out.str();
}

std::vector<int> StreamRecorder::StreamPreds(Stream stream) const {
  const StreamState& s = streams_.at(reinterpret_cast<uintptr_t>(stream.handle));
  // Enqueued by the host: after the host's earlier work, and after the stream's.
  std::vector<int> preds = {host_last_, s.last};
  // The legacy default stream and the blocking streams of a device wait for each other.
  for (const auto& [handle, other] : streams_) {
    if (other.device != s.device || &other == &s) continue;
    if ((s.kind == Kind::kLegacy && other.kind == Kind::kBlocking) ||
        (s.kind == Kind::kBlocking && other.kind == Kind::kLegacy)) {
      preds.push_back(other.last);
    }
  }
  return preds;
}

int StreamRecorder::AddOp(const std::string& name, const std::vector<int>& preds,
                          const std::vector<NDArray>& reads, const std::vector<NDArray>& writes) {
  Op op;
  op.name = name;
  op.after.assign(ops_.size(), false);
  for (int p : preds) {
    if (p < 0) continue;
    op.after[static_cast<size_t>(p)] = true;
    const std::vector<bool>& before = ops_[static_cast<size_t>(p)].after;
    for (size_t i = 0; i < before.size(); ++i) {
      if (before[i]) op.after[i] = true;
    }
  }
  for (const auto* list : {&reads, &writes}) {
    for (const NDArray& a : *list) {
      const auto begin = reinterpret_cast<uintptr_t>(a.raw_data());
      op.accesses.push_back({begin, begin + a.nbytes(), list == &writes});
    }
  }
  ops_.push_back(std::move(op));
  return static_cast<int>(ops_.size()) - 1;
}

int StreamRecorder::OnStream(Stream stream, const std::string& name,
                             const std::vector<NDArray>& reads,
                             const std::vector<NDArray>& writes) {
  const int op = AddOp(name + " on " + StreamName(stream), StreamPreds(stream), reads, writes);
  streams_.at(reinterpret_cast<uintptr_t>(stream.handle)).last = op;
  return op;
}

void StreamRecorder::Record(Event event, Stream stream) {
  COHORT_CHECK_EQ(event.device, stream.device) << "StreamRecorder: an event of another GPU";
  // A record is itself an operation on the stream: on the legacy stream it follows the
  // blocking streams' work too.
  events_.at(reinterpret_cast<uintptr_t>(event.handle)) = OnStream(stream, "record", {}, {});
}

void StreamRecorder::Wait(Stream stream, Event event) {
  std::vector<int> preds = StreamPreds(stream);
  preds.push_back(events_.at(reinterpret_cast<uintptr_t>(event.handle)));  // -1: never recorded
  const int op = AddOp("wait on " + StreamName(stream), preds, {}, {});
  streams_.at(reinterpret_cast<uintptr_t>(stream.handle)).last = op;
}

void StreamRecorder::HostWait(Event event) {
  host_last_ = AddOp("host wait",
                     {host_last_, events_.at(reinterpret_cast<uintptr_t>(event.handle))}, {}, {});
}

void StreamRecorder::CopyAsync(const NDArray& dst, const NDArray& src, Stream stream) {
  COHORT_CHECK(dst.shape() == src.shape() && dst.dtype() == src.dtype())
      << "StreamRecorder: CopyAsync casts or reshapes nothing, as cudaMemcpyAsync";
  OnStream(stream, "copy", {src}, {dst});
  src.CopyTo(dst);
}

void StreamRecorder::CastAsync(const NDArray& dst, const NDArray& src, Stream stream) {
  COHORT_CHECK(dst.shape() == src.shape()) << "StreamRecorder: CastAsync reshapes nothing";
  OnStream(stream, "cast", {src}, {dst});
  src.AsType(dst.dtype()).CopyTo(dst);
}

void StreamRecorder::HostCopy(const NDArray& dst, const NDArray& src) {
  HostWork("copy", {src}, {dst});
  src.CopyTo(dst);
}

void StreamRecorder::Kernel(Stream stream, const std::string& name,
                            const std::vector<NDArray>& reads, const std::vector<NDArray>& writes,
                            const std::function<void()>& run) {
  OnStream(stream, name, reads, writes);
  if (run) run();
}

void StreamRecorder::HostWork(const std::string& name, const std::vector<NDArray>& reads,
                              const std::vector<NDArray>& writes,
                              const std::function<void()>& run) {
  host_last_ = AddOp(name + " on the host", {host_last_}, reads, writes);
  if (run) run();
}

void StreamRecorder::GroupStart() {
  COHORT_CHECK(!in_group_) << "StreamRecorder: GroupStart inside a group";
  in_group_ = true;
}

void StreamRecorder::AllReduce(const NDArray& in, const NDArray& out, Stream stream) {
  COHORT_CHECK(in_group_) << "StreamRecorder: AllReduce outside a group";
  calls_[stream.device].push_back({in, out, stream});
}

void StreamRecorder::GroupEnd() {
  COHORT_CHECK(in_group_) << "StreamRecorder: GroupEnd without GroupStart";
  in_group_ = false;
  const size_t n = calls_.empty() ? 0 : calls_.begin()->second.size();
  for (const auto& [device, calls] : calls_) {
    COHORT_CHECK_EQ(calls.size(), n) << "StreamRecorder: devices made unequal numbers of calls";
  }
  for (size_t c = 0; c < n; ++c) {
    // No device's part finishes before every device has enqueued its own, so each part follows
    // all their streams' earlier work; but a part touches only its device's arrays and ends
    // only its own stream (the exchange between GPUs is NCCL's business).
    std::vector<int> preds;
    const NDArray& first = calls_.begin()->second[c].in;
    std::vector<float> sum(static_cast<size_t>(first.size()), 0.0f);
    for (const auto& [device, calls] : calls_) {
      const std::vector<int> p = StreamPreds(calls[c].stream);
      preds.insert(preds.end(), p.begin(), p.end());
      COHORT_CHECK(calls[c].in.shape() == first.shape() && calls[c].in.dtype() == first.dtype())
          << "StreamRecorder: all-reduce " << c << " has " << calls[c].in.dtype() << " "
          << calls[c].in.shape() << " on GPU " << device << " and " << first.dtype() << " "
          << first.shape() << " on another";
      const std::vector<float> in = calls[c].in.ToVector<float>();
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += in[i];
    }
    const NDArray total = NDArray::FromVector<float>(first.shape(), sum).AsType(first.dtype());
    for (const auto& [device, calls] : calls_) {
      const int op = AddOp("allreduce " + std::to_string(c) + " on " + StreamName(calls[c].stream),
                           preds, {calls[c].in}, {calls[c].out});
      total.CopyTo(calls[c].out);
      streams_.at(reinterpret_cast<uintptr_t>(calls[c].stream.handle)).last = op;
    }
  }
  calls_.clear();
}

std::vector<std::string> StreamRecorder::Hazards() const {
  std::vector<std::string> hazards;
  for (size_t j = 0; j < ops_.size(); ++j) {
    for (size_t i = 0; i < j; ++i) {
      if (ops_[j].after[i]) continue;
      for (const Access& a : ops_[i].accesses) {
        for (const Access& b : ops_[j].accesses) {
          if ((a.write || b.write) && a.begin < b.end && b.begin < a.end) {
            std::ostringstream out;
            out << "#" << i << " " << ops_[i].name << " and #" << j << " " << ops_[j].name
                << ": unordered accesses to " << std::min(a.end, b.end) - std::max(a.begin, b.begin)
                << " shared bytes";
            hazards.push_back(out.str());
          }
        }
      }
    }
  }
  return hazards;
}

std::vector<std::string> StreamRecorder::Names() const {
  std::vector<std::string> names;
  for (const Op& op : ops_) names.push_back(op.name);
  return names;
}

}  // namespace cohort::testing
