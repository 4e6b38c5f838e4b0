// A trace of where training time goes, in the Chrome trace event format (Note [Timeline]).
#pragma once

#include <cstdint>
#include <string>

namespace cohort::timeline {

// Note [Timeline]
// `cohort-train --timeline FILE.json` records spans (load, forward, backward, allreduce of each
// bucket, update, data, metric, the waits) per thread: the main thread, each device's thread and
// the communication thread, and writes them as Chrome trace events (Perfetto, chrome://tracing):
// pid the rank, named "rank R on HOST" and sorted by rank when a job's traces are opened together;
// tid the thread, the devices' tracks sorted by device index after the threads. Recording is meant
// to stay on for whole epochs: a span is two clock reads and one store into the thread's own
// buffer, reserved up front (no lock, no allocation until a thread has recorded 64K spans); when
// off it is one relaxed atomic load. scripts/timeline-summary.py prints each step's communication
// that no compute overlapped. The recorder lives in base/ rather than trainer/ (where DESIGN.md
// puts the timeline) because the device threads (executor_manager) and the communication thread
// (kvstore) record into it, and neither may use the trainer; the trainer and cohort-train drive it.

bool Enabled();
// Starts recording for this process (rank: the trace's pid), forgetting earlier spans.
void Start(int rank);
// Stops recording and writes every thread's spans to `path`; throws naming the path on failure.
void Write(const std::string& path);

// Names the calling thread in the trace: "main", "comm", or kind + " " + index ("device 0").
// Cheap after the first call with the same label.
void LabelThread(const char* kind, int index = -1);

struct ThreadLog;

// Records [construction, destruction) on the calling thread. `name` must be a literal; bucket
// and bytes (when >= 0) become the span's args.
class Span {
 public:
  explicit Span(const char* name, int64_t bucket = -1, int64_t bytes = -1);
  ~Span();
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

  // On device d's track ("device d") instead of the calling thread's: devices run on a pool
  // whose calling thread is also the main thread, and one device runs on one thread at a time.
  static constexpr int kMaxDeviceTracks = 64;
  struct OnDevice {
    int device;
  };
  Span(OnDevice on, const char* name);

 private:
  ThreadLog* log_ = nullptr;  // null: not recording
  const char* name_;
  int64_t start_ns_ = 0, bucket_ = -1, bytes_ = -1;
};

}  // namespace cohort::timeline
