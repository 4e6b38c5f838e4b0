// The ring all-reduce's link over TCP (Note [TCP ring]).
#include "kvstore/tcp_ring_link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "base/error_mpi.h"
#include "kvstore/collective_watchdog.h"

namespace cohort {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kMagic = 0x436f5249;  // "CoRI"
constexpr int kMaxAddresses = 8;
constexpr auto kConnectTimeout = std::chrono::seconds(3);  // one address
constexpr auto kSetupTimeout = std::chrono::seconds(20);   // the whole ring
// Received floats are added a staging chunk at a time, small enough to stay in cache between
// the kernel's copy into it and the sum that reads it.
constexpr int64_t kStagingBytes = 256 << 10;

// What a rank publishes: whether it listens, where, and the ranks' shared token.
struct Card {
  int32_t job_rank = 0;  // in MPI_COMM_WORLD: what messages name
  int32_t listening = 0;
  int32_t port = 0;  // host byte order
  int32_t addresses = 0;
  uint32_t address[kMaxAddresses] = {};  // network byte order
};

// Sent by the connecting rank and answered by the accepting one.
struct Hello {
  uint32_t magic = kMagic;
  int32_t rank = -1;
  uint64_t token = 0;
};

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// A socket closed when it goes out of scope unless released.
class Socket {
 public:
  explicit Socket(int fd = -1) : fd_(fd) {}
  Socket(Socket&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Socket& operator=(Socket&& o) noexcept {
    if (this != &o) {
      Close();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~Socket() { Close(); }
  int fd() const { return fd_; }
  bool ok() const { return fd_ >= 0; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

int MillisLeft(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

// Waits until `fd` is ready for `events` or the deadline passes.
bool WaitFor(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p = {fd, events, 0};
    const int n = ::poll(&p, 1, MillisLeft(deadline));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}

bool SetBlocking(int fd, bool blocking) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return false;
  return ::fcntl(fd, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK) == 0;
}

// Exactly `size` bytes each way on a blocking socket, or false past the deadline or on an error.
bool SendAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}
bool ReadAll(int fd, void* data, size_t size, Clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    if (!WaitFor(fd, POLLIN, deadline)) return false;
    const ssize_t n = ::recv(fd, p, size, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Note [TCP ring liveness]
// A host that vanishes (its link or power gone) sends no FIN or RST: a rank waiting for it
// would wait for the collective deadline (COHORT_COMM_TIMEOUT, 600 s), and mpirun's own
// keepalive ends the job first, after about 5 s, without a word from Cohort. So the ring's
// sockets probe an idle peer after 1 s, every second, and give up after 2 unanswered probes
// (two seconds without an answer from a host's kernel: it is gone, not busy): the recv of a
// rank waiting in the ring on a lost host fails with ETIMEDOUT in about 3 s, naming the rank
// and its host. A rank waiting in one of MPI's own collectives (the small buckets, the
// step's stop agreement) learns it from the collective watchdog, which asks the ring's sockets
// (idle then, so probed) whether they hold such an error (AddLivenessProbe) and ends the process
// naming the peer, before mpirun's own keepalive (about 5 s) ends the job without a word. The
// kernel of a live host answers the probes even when the rank is stopped (SIGSTOP) or busy, so
// those are still the deadline's to name. (A socket with data of its own unacknowledged is not
// probed; the ring always waits on a receiving socket, which is.)
void NoDelay(int fd) {
  const int one = 1, idle = 1, interval = 1, probes = 2;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes));
}

// The peer's IPv4 address of a connected socket, for messages ("" when unknown).
std::string PeerHost(int fd) {
  sockaddr_in addr = {};
  socklen_t len = sizeof(addr);
  char text[INET_ADDRSTRLEN] = {};
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      addr.sin_family != AF_INET || !::inet_ntop(AF_INET, &addr.sin_addr, text, sizeof(text))) {
    return "";
  }
  return text;
}

// The IPv4 addresses to publish (network byte order), at most kMaxAddresses.
std::vector<uint32_t> LocalAddresses(const std::string& ifname, std::string* why) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) {
    *why = Errno("getifaddrs");
    return {};
  }
  std::vector<uint32_t> found;
  for (const ifaddrs* a = list; a && found.size() < kMaxAddresses; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !(a->ifa_flags & IFF_UP)) continue;
    if (ifname.empty() ? (a->ifa_flags & IFF_LOOPBACK) != 0 : ifname != a->ifa_name) continue;
    found.push_back(reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr);
  }
  ::freeifaddrs(list);
  if (found.empty()) {
    *why = ifname.empty() ? std::string("no IPv4 interface is up besides loopback")
                          : "interface '" + ifname + "' (COHORT_SOCKET_IFNAME) has no IPv4 address";
  }
  return found;
}

// Listens on every address, on a port the kernel picks.
Socket Listen(int32_t* port, std::string* why) {
  Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.ok()) {
    *why = Errno("socket");
    return s;
  }
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof(addr);
  if (::bind(s.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(s.fd(), 16) != 0 ||
      ::getsockname(s.fd(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    *why = Errno("listening socket");
    return Socket();
  }
  *port = ntohs(addr.sin_port);
  return s;
}

std::string AddressText(uint32_t address, int32_t port) {
  char text[INET_ADDRSTRLEN] = "?";
  ::inet_ntop(AF_INET, &address, text, sizeof(text));
  return std::string(text) + ":" + std::to_string(port);
}

// Connects to `peer`'s card and exchanges hellos; the first address whose answer comes from
// `peer` with the token wins.
Socket ConnectTo(const Card& card, int peer, int rank, uint64_t token, Clock::time_point deadline,
                 std::string* why) {
  const std::string name = "rank " + std::to_string(card.job_rank);
  for (int i = 0; i < card.addresses; ++i) {
    const std::string where = AddressText(card.address[i], card.port);
    Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!s.ok() || !SetBlocking(s.fd(), false)) {
      *why = Errno("socket");
      return Socket();
    }
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(card.port));
    addr.sin_addr.s_addr = card.address[i];
    const auto until = std::min(deadline, Clock::now() + kConnectTimeout);
    int error = 0;
    socklen_t len = sizeof(error);
    if (::connect(s.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      if (errno != EINPROGRESS) {
        error = errno;
      } else if (!WaitFor(s.fd(), POLLOUT, until)) {
        error = ETIMEDOUT;
      } else if (::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &error, &len) != 0) {
        error = errno;
      }
    }
    if (error != 0) {
      *why = name + " at " + where + ": " + std::strerror(error);
      continue;
    }
    SetBlocking(s.fd(), true);
    NoDelay(s.fd());
    Hello mine, theirs;
    mine.rank = rank;
    mine.token = token;
    if (!SendAll(s.fd(), &mine, sizeof(mine)) ||
        !ReadAll(s.fd(), &theirs, sizeof(theirs), std::min(deadline, until + kConnectTimeout)) ||
        theirs.magic != kMagic || theirs.token != token || theirs.rank != peer) {
      *why = name + " at " + where + ": no hello from it";
      continue;
    }
    return s;
  }
  if (card.addresses == 0) *why = name + " published no address";
  return Socket();
}

// Accepts connections until one says hello from `peer` (`peer_job_rank` in MPI_COMM_WORLD) with
// the token, and answers it; or until the deadline, or `give_up` (looked at every 50 ms).
Socket AcceptFrom(int listener, int peer, int peer_job_rank, int rank, uint64_t token,
                  Clock::time_point deadline, const std::atomic<bool>& give_up, std::string* why) {
  while (!give_up.load() && Clock::now() < deadline) {
    pollfd p = {listener, POLLIN, 0};
    const int ready = ::poll(&p, 1, std::min(50, MillisLeft(deadline)));
    if (ready < 0 && errno != EINTR) break;  // the listener failed: no connection will come
    if (ready <= 0) continue;
    Socket s(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
    if (!s.ok()) continue;
    NoDelay(s.fd());
    Hello theirs, mine;
    mine.rank = rank;
    mine.token = token;
    if (ReadAll(s.fd(), &theirs, sizeof(theirs),
                std::min(deadline, Clock::now() + kConnectTimeout)) &&
        theirs.magic == kMagic && theirs.token == token && theirs.rank == peer &&
        SendAll(s.fd(), &mine, sizeof(mine))) {
      return s;
    }
  }
  *why = "no connection from rank " + std::to_string(peer_job_rank) + " within " +
         std::to_string(kSetupTimeout.count()) + " s";
  return Socket();
}

class TcpRingLink final : public RingLink {
 public:
  // The neighbours' ranks are in MPI_COMM_WORLD, for messages.
  TcpRingLink(Socket to_next, Socket from_prev, int next_job_rank, int prev_job_rank)
      : next_(std::move(to_next)),
        prev_(std::move(from_prev)),
        next_rank_(next_job_rank),
        prev_rank_(prev_job_rank),
        next_host_(PeerHost(next_.fd())),
        prev_host_(PeerHost(prev_.fd())),
        staging_(static_cast<size_t>(kStagingBytes / sizeof(float))) {
    SetBlocking(next_.fd(), false);
    SetBlocking(prev_.fd(), false);
    probe_ = AddLivenessProbe([this] { return Gone(); });
  }
  ~TcpRingLink() override { RemoveLivenessProbe(probe_); }

  void Exchange(const float* send, int64_t send_count, float* recv, int64_t recv_count,
                bool accumulate) override {
    const char* out = reinterpret_cast<const char*>(send);
    int64_t out_left = send_count * static_cast<int64_t>(sizeof(float));
    int64_t in_left = recv_count * static_cast<int64_t>(sizeof(float));
    char* in = reinterpret_cast<char*>(recv);  // copied straight into place
    char* const staging = reinterpret_cast<char*>(staging_.data());
    int64_t staged = 0;      // bytes in the staging chunk
    float* sum_into = recv;  // where the staging chunk is added
    while (out_left > 0 || in_left > 0) {
      bool moved = false;
      if (out_left > 0) {
        const ssize_t n =
            ::send(next_.fd(), out, static_cast<size_t>(out_left), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
          out += n;
          out_left -= n;
          moved = true;
        } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          Fail("link to", next_rank_, std::strerror(errno));
        }
      }
      if (in_left > 0) {
        const int64_t room = accumulate ? std::min(in_left, kStagingBytes - staged) : in_left;
        const ssize_t n = ::recv(prev_.fd(), accumulate ? staging + staged : in,
                                 static_cast<size_t>(room), MSG_DONTWAIT);
        if (n == 0) Fail("link from", prev_rank_, "closed (that rank ended)");
        if (n > 0) {
          in_left -= n;
          moved = true;
          if (!accumulate) {
            in += n;
          } else if ((staged += n) == kStagingBytes || in_left == 0) {
            const int64_t floats = staged / static_cast<int64_t>(sizeof(float));
            for (int64_t i = 0; i < floats; ++i) sum_into[i] += staging_[i];
            sum_into += floats;
            staged = 0;
          }
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          Fail("link from", prev_rank_, std::strerror(errno));
        }
      }
      if (!moved) {  // neither socket can move: sleep until one can. A finished one is left
                     // out, as poll would report its peer's hang-up at once, again and again.
        NoteWaitingOn(in_left > 0 ? prev_rank_ : next_rank_);  // for the deadline's message
        pollfd p[2] = {{out_left > 0 ? next_.fd() : -1, POLLOUT, 0},
                       {in_left > 0 ? prev_.fd() : -1, POLLIN, 0}};
        ::poll(p, 2, 1000);
      }
    }
  }

 private:
  // Note [TCP ring liveness]: "" unless a socket's keepalive gave up on its peer, else which
  // link and host. A peer that closed or reset its end is left to the ring's own reads (reading
  // SO_ERROR takes the error: a reset then reads as a close there).
  std::string Gone() const {
    for (const auto& [socket, what, peer, host] :
         {std::tuple{&next_, "link to", next_rank_, &next_host_},
          std::tuple{&prev_, "link from", prev_rank_, &prev_host_}}) {
      pollfd p = {socket->fd(), 0, 0};
      if (::poll(&p, 1, 0) <= 0 || !(p.revents & POLLERR)) continue;
      int error = 0;
      socklen_t len = sizeof(error);
      ::getsockopt(socket->fd(), SOL_SOCKET, SO_ERROR, &error, &len);
      if (error != ETIMEDOUT) continue;
      return "the TCP ring's " + std::string(what) + " rank " + std::to_string(peer) +
             (host->empty() ? "" : " (host " + *host + ")") +
             " answers no keepalive probe: the host or its link is gone";
    }
    return "";
  }

  // Note [TCP ring liveness]: names the rank and its host.
  [[noreturn]] void Fail(const char* what, int peer, const std::string& reason) {
    const std::string& host = peer == next_rank_ ? next_host_ : prev_host_;
    throw Error("kvstore: TCP ring: the " + std::string(what) + " rank " + std::to_string(peer) +
                    (host.empty() ? "" : " (host " + host + ")") + " failed: " + reason +
                    (reason == std::strerror(ETIMEDOUT) ? " (it answers no keepalive probe: the "
                                                          "host or its link is gone)"
                                                        : ""),
                __FILE__, __LINE__);
  }

  Socket next_, prev_;
  int next_rank_, prev_rank_;
  std::string next_host_, prev_host_;
  int probe_ = 0;  // AddLivenessProbe's id
  std::vector<float> staging_;
};

}  // namespace

std::unique_ptr<RingLink> ConnectTcpRing(MPI_Comm comm, const std::string& ifname,
                                         std::string* why) {
  int rank = 0, size = 1;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &size));
  COHORT_CHECK_GE(size, 2) << "a TCP ring needs two ranks";
  why->clear();
  Card mine;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &mine.job_rank));
  Socket listener = Listen(&mine.port, why);
  const std::vector<uint32_t> addresses =
      listener.ok() ? LocalAddresses(ifname, why) : std::vector<uint32_t>{};
  mine.listening = listener.ok() && !addresses.empty();
  mine.addresses = static_cast<int32_t>(addresses.size());
  std::copy(addresses.begin(), addresses.end(), mine.address);
  std::vector<Card> cards(static_cast<size_t>(size));
  MPI_CHECK(
      MPI_Allgather(&mine, sizeof(Card), MPI_BYTE, cards.data(), sizeof(Card), MPI_BYTE, comm));
  uint64_t token = static_cast<uint64_t>(Clock::now().time_since_epoch().count()) ^
                   (static_cast<uint64_t>(::getpid()) << 40);
  if (rank == 0) {
    try {
      token ^= (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
    } catch (const std::exception&) {  // the clock and the pid make the token then
    }
  }
  MPI_CHECK(MPI_Bcast(&token, 1, MPI_UINT64_T, 0, comm));

  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  Socket to_next, from_prev;
  const bool everyone_listens =
      std::all_of(cards.begin(), cards.end(), [](const Card& c) { return c.listening != 0; });
  if (everyone_listens) {
    // Accepting runs beside connecting: every rank connects first, and a connection is only
    // known to be the right one once the other side has answered its hello. Nothing may throw
    // from here to the Allreduce below, which every rank must reach.
    const auto deadline = Clock::now() + kSetupTimeout;
    std::string accept_why;
    std::thread acceptor;
    std::atomic<bool> give_up = false;
    try {
      acceptor = std::thread([&] {
        try {
          from_prev = AcceptFrom(listener.fd(), prev, cards[prev].job_rank, rank, token, deadline,
                                 give_up, &accept_why);
        } catch (const std::exception& e) {
          accept_why = e.what();
        }
      });
      to_next = ConnectTo(cards[next], next, rank, token, deadline, why);
    } catch (const std::exception& e) {
      *why = e.what();
      to_next.Close();
    }
    // A connect succeeds once its peer's acceptor has answered, so when every rank's did, every
    // acceptor has its connection; when one failed, the acceptors waiting for it stop at once
    // instead of at the deadline. (The acceptor makes no MPI call.)
    // The thread is joined before an MPI error may throw.
    int mine_connected = to_next.ok() ? 1 : 0, all_connected = 0;
    const int status = MPI_Allreduce(&mine_connected, &all_connected, 1, MPI_INT, MPI_MIN, comm);
    if (status != MPI_SUCCESS || !all_connected) give_up = true;
    if (acceptor.joinable()) acceptor.join();
    MPI_CHECK(status);
    if (!from_prev.ok() && give_up) {
      accept_why =
          "rank " + std::to_string(cards[prev].job_rank) + " could not connect to this one";
    }
    if (to_next.ok() && !from_prev.ok()) *why = accept_why;
  }
  const bool connected = to_next.ok() && from_prev.ok();
  if (!AllRanks(comm, connected)) {
    if (connected || why->empty()) *why = kAnotherRankFailed;
    return nullptr;
  }
  return std::make_unique<TcpRingLink>(std::move(to_next), std::move(from_prev),
                                       cards[next].job_rank, cards[prev].job_rank);
}

}  // namespace cohort
