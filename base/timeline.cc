// Per-thread span buffers and their Chrome trace (Note [Timeline]).
#include "base/timeline.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

#include "base/error.h"

namespace cohort::timeline {
namespace {

struct Event {
  const char* name;
  int64_t start_ns, duration_ns, bucket, bytes;
};

std::atomic<bool> enabled{false};
std::atomic<int64_t> origin_ns{0};
int trace_pid = 0;
std::mutex logs_mutex;
std::vector<std::unique_ptr<ThreadLog>>& Logs() {
  static auto* logs = new std::vector<std::unique_ptr<ThreadLog>>;  // alive for every thread
  return *logs;
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct ThreadLog {
  std::vector<Event> events;
  const char* kind = nullptr;
  int index = -1;
  int tid = 0;
};

namespace {

std::atomic<ThreadLog*> device_tracks[Span::kMaxDeviceTracks];

ThreadLog& ThisThread() {
  thread_local ThreadLog* log = [] {
    auto owned = std::make_unique<ThreadLog>();
    owned->events.reserve(1 << 16);
    std::lock_guard<std::mutex> lock(logs_mutex);
    owned->tid = static_cast<int>(Logs().size());
    Logs().push_back(std::move(owned));
    return Logs().back().get();
  }();
  return *log;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

bool Enabled() { return enabled.load(std::memory_order_relaxed); }

void Start(int rank) {
  std::lock_guard<std::mutex> lock(logs_mutex);
  for (auto& log : Logs()) log->events.clear();
  trace_pid = rank;
  origin_ns.store(NowNs());
  enabled.store(true);
}

void LabelThread(const char* kind, int index) {
  if (!Enabled()) return;
  ThreadLog& log = ThisThread();
  log.kind = kind;
  log.index = index;
}

Span::Span(const char* name, int64_t bucket, int64_t bytes)
    : name_(name), bucket_(bucket), bytes_(bytes) {
  if (!Enabled()) return;
  log_ = &ThisThread();
  start_ns_ = NowNs();
}

Span::Span(OnDevice on, const char* name) : name_(name) {
  if (!Enabled() || on.device < 0 || on.device >= kMaxDeviceTracks) return;
  ThreadLog* track = device_tracks[on.device].load(std::memory_order_acquire);
  if (track == nullptr) {  // made once per device, under the lock
    auto owned = std::make_unique<ThreadLog>();
    owned->events.reserve(1 << 16);
    owned->kind = "device";
    owned->index = on.device;
    std::lock_guard<std::mutex> lock(logs_mutex);
    track = device_tracks[on.device].load();
    if (track == nullptr) {
      owned->tid = static_cast<int>(Logs().size());
      track = owned.get();
      Logs().push_back(std::move(owned));
      device_tracks[on.device].store(track, std::memory_order_release);
    }
  }
  log_ = track;
  start_ns_ = NowNs();
}

Span::~Span() {
  if (log_ == nullptr || !Enabled()) return;
  const int64_t end = NowNs();
  log_->events.push_back({name_, start_ns_ - origin_ns.load(std::memory_order_relaxed),
                          end - start_ns_, bucket_, bytes_});
}

void Write(const std::string& path) {
  enabled.store(false);
  std::lock_guard<std::mutex> lock(logs_mutex);
  std::ofstream out(path);
  if (!out) throw Error("--timeline: cannot write '" + path + "'", __FILE__, __LINE__);
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  // The process is the rank on its host, ordered by rank when traces of a job are merged; the
  // tracks are ordered main thread, other threads, then the devices by index.
  char host[256] = "";
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  out << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << trace_pid
      << ",\"args\":{\"name\":\"rank " << trace_pid << (host[0] ? " on " : "") << Escape(host)
      << "\"}},\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" << trace_pid
      << ",\"args\":{\"sort_index\":" << trace_pid << "}}";
  char line[256];
  for (const auto& log : Logs()) {
    if (log->events.empty() && log->kind == nullptr) continue;
    std::string name = log->kind ? log->kind : "thread";
    if (log->index >= 0) name += " " + std::to_string(log->index);
    const bool device = log->kind != nullptr && std::string(log->kind) == "device";
    const int sort = device ? 1000 + log->index : log->tid;
    out << ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << trace_pid
        << ",\"tid\":" << log->tid << ",\"args\":{\"name\":\"" << Escape(name) << "\"}}"
        << ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":" << trace_pid
        << ",\"tid\":" << log->tid << ",\"args\":{\"sort_index\":" << sort << "}}";
    for (const Event& e : log->events) {
      std::snprintf(line, sizeof(line),
                    ",\n{\"name\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f",
                    e.name, trace_pid, log->tid, e.start_ns * 1e-3, e.duration_ns * 1e-3);
      out << line;
      if (e.bucket >= 0 || e.bytes >= 0) {
        out << ",\"args\":{\"bucket\":" << e.bucket << ",\"bytes\":" << e.bytes << "}";
      }
      out << "}";
    }
  }
  out << "\n]}\n";
  if (!out) throw Error("--timeline: writing '" + path + "' failed", __FILE__, __LINE__);
}

}  // namespace cohort::timeline
