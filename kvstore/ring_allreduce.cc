// Pipelined ring all-reduce (Note [Ring all-reduce]) and its MPI link.
#include "kvstore/ring_allreduce.h"

#include <algorithm>

#include "base/error_mpi.h"
#include "ndarray/convert.h"

namespace cohort {
namespace {
constexpr int kTag = 0x436f;  // "Co"

// Segment i of n over count floats: [begin, end), the first count % n segments one longer.
std::pair<int64_t, int64_t> Segment(int64_t count, int n, int i) {
  const int64_t base = count / n, extra = count % n;
  const int64_t begin = i * base + std::min<int64_t>(i, extra);
  return {begin, begin + base + (i < extra ? 1 : 0)};
}

// A segment as MPI messages of chunk_ floats, every send posted at once and two receives
// outstanding: chunk k is summed while chunk k + 1 arrives.
class MpiRingLink final : public RingLink {
 public:
  MpiRingLink(MPI_Comm comm, int64_t chunk_bytes)
      : comm_(comm),
        chunk_(std::max<int64_t>(1, chunk_bytes / static_cast<int64_t>(sizeof(float)))) {
    MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    MPI_CHECK(MPI_Comm_size(comm_, &size_));
    for (auto& s : staging_) s.resize(static_cast<size_t>(chunk_));
  }

  void Exchange(const float* send, int64_t send_count, float* recv, int64_t recv_count,
                bool accumulate) override {
    const int to = (rank_ + 1) % size_, from = (rank_ + size_ - 1) % size_;
    const int64_t send_chunks = (send_count + chunk_ - 1) / chunk_;
    const int64_t recv_chunks = (recv_count + chunk_ - 1) / chunk_;
    sends_.resize(static_cast<size_t>(send_chunks));
    for (int64_t k = 0; k < send_chunks; ++k) {
      const int64_t n = std::min(chunk_, send_count - k * chunk_);
      MPI_CHECK(MPI_Isend(send + k * chunk_, static_cast<int>(n), MPI_FLOAT, to, kTag, comm_,
                          &sends_[k]));
    }
    MPI_Request recvs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    auto post = [&](int64_t k) {
      if (k >= recv_chunks) return;
      const int64_t n = std::min(chunk_, recv_count - k * chunk_);
      float* into = accumulate ? staging_[k % 2].data() : recv + k * chunk_;
      MPI_CHECK(MPI_Irecv(into, static_cast<int>(n), MPI_FLOAT, from, kTag, comm_, &recvs[k % 2]));
    };
    post(0);
    post(1);
    for (int64_t k = 0; k < recv_chunks; ++k) {
      MPI_CHECK(MPI_Wait(&recvs[k % 2], MPI_STATUS_IGNORE));
      if (accumulate) {
        const int64_t n = std::min(chunk_, recv_count - k * chunk_);
        const float* in = staging_[k % 2].data();
        float* out = recv + k * chunk_;
        for (int64_t i = 0; i < n; ++i) out[i] += in[i];
      }
      post(k + 2);  // the staging buffer of chunk k is free again
    }
    MPI_CHECK(MPI_Waitall(static_cast<int>(sends_.size()), sends_.data(), MPI_STATUSES_IGNORE));
  }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  int64_t chunk_;  // floats per message
  std::vector<float> staging_[2];
  std::vector<MPI_Request> sends_;
};
}  // namespace

bool AllRanks(MPI_Comm comm, bool mine) {
  int all = mine ? 1 : 0;
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, comm));
  return all == 1;
}

std::unique_ptr<RingLink> MakeMpiRingLink(MPI_Comm comm, int64_t chunk_bytes) {
  return std::make_unique<MpiRingLink>(comm, chunk_bytes);
}

RingAllreduce::RingAllreduce(MPI_Comm comm, int64_t chunk_bytes)
    : RingAllreduce(comm, MakeMpiRingLink(comm, chunk_bytes)) {}

RingAllreduce::RingAllreduce(MPI_Comm comm, std::unique_ptr<RingLink> link)
    : link_(std::move(link)) {
  MPI_CHECK(MPI_Comm_rank(comm, &rank_));
  MPI_CHECK(MPI_Comm_size(comm, &size_));
}

void RingAllreduce::SetWire(DType wire) {
  COHORT_CHECK(wire == DType::kFloat32 || wire == DType::kBFloat16 || wire == DType::kFloat16)
      << "ring all-reduce: floats cross as float32, bfloat16 or float16, not " << DTypeName(wire);
  wire_ = wire;
}

// Note [Gradient compression]: the link converts, or the ring packs two narrowed floats into
// each word it passes as they are.
void RingAllreduce::Exchange(const float* send, int64_t send_count, float* recv, int64_t recv_count,
                             bool accumulate, bool round_sum) {
  if (wire_ == DType::kFloat32) {
    link_->Exchange(send, send_count, recv, recv_count, accumulate);
    return;
  }
  if (link_->ExchangeNarrow(send, send_count, recv, recv_count, accumulate, wire_, round_sum)) {
    return;
  }
  const auto words = [](int64_t halves) { return (halves + 1) / 2; };
  if (packed_send_.size() < static_cast<size_t>(words(send_count)))
    packed_send_.resize(static_cast<size_t>(words(send_count)));
  if (packed_recv_.size() < static_cast<size_t>(words(recv_count)))
    packed_recv_.resize(static_cast<size_t>(words(recv_count)));
  NarrowFromFloat(send, send_count, wire_, packed_send_.data());
  link_->Exchange(packed_send_.data(), words(send_count), packed_recv_.data(), words(recv_count),
                  false);
  if (accumulate && round_sum) {
    AddWidenedRounded(wire_, packed_recv_.data(), recv_count, recv);
  } else if (accumulate) {
    AddWidened(wire_, packed_recv_.data(), recv_count, recv);
  } else {
    WidenToFloat(wire_, packed_recv_.data(), recv_count, recv);
  }
}

// The owned segment is rounded to the wire type as its last addition is made, so the
// all-gather passes on exactly what the owner keeps (Note [Gradient compression]).
void RingAllreduce::Sum(float* data, int64_t count) {
  if (size_ == 1 || count == 0) return;
  ReduceScatterRounding(data, count, /*round_owned=*/true);
  GatherOwned(data, count);
}

void RingAllreduce::ReduceScatter(float* data, int64_t count) {
  ReduceScatterRounding(data, count, /*round_owned=*/false);
}

void RingAllreduce::ReduceScatterRounding(float* data, int64_t count, bool round_owned) {
  if (size_ == 1 || count == 0) return;
  for (int s = 0; s < size_ - 1; ++s) {
    const auto [sb, se] = Segment(count, size_, (rank_ - s + size_) % size_);
    const auto [rb, re] = Segment(count, size_, (rank_ - s - 1 + 2 * size_) % size_);
    // The last step adds into the segment this rank owns.
    Exchange(data + sb, se - sb, data + rb, re - rb, true, round_owned && s == size_ - 2);
  }
}

// Rank r holds the sum of segment r + 1.
std::pair<int64_t, int64_t> RingAllreduce::Owned(int64_t count) const {
  return Segment(count, size_, (rank_ + 1) % size_);
}

void RingAllreduce::AllGather(float* data, int64_t count) {
  if (size_ == 1 || count == 0) return;
  // The owner keeps what the others get (Note [Gradient compression]).
  if (wire_ != DType::kFloat32) {
    const auto [ob, oe] = Owned(count);
    RoundThrough(wire_, data + ob, oe - ob);
  }
  GatherOwned(data, count);
}

void RingAllreduce::GatherOwned(float* data, int64_t count) {
  for (int s = 0; s < size_ - 1; ++s) {
    const auto [sb, se] = Segment(count, size_, (rank_ + 1 - s + size_) % size_);
    const auto [rb, re] = Segment(count, size_, (rank_ - s + size_) % size_);
    Exchange(data + sb, se - sb, data + rb, re - rb, false);
  }
}

void HierarchicalSum(RingAllreduce& inside, const std::function<void(float*, int64_t)>& across,
                     float* data, int64_t count) {
  inside.ReduceScatter(data, count);
  const auto [begin, end] = inside.Owned(count);
  across(data + begin, end - begin);
  inside.AllGather(data, count);
}

}  // namespace cohort
