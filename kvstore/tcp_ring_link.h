// The ring all-reduce's link over TCP sockets between hosts (Note [TCP ring]).
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "kvstore/ring_allreduce.h"

namespace cohort {

// Note [TCP ring]
// Between hosts Open MPI's TCP transport polls: a rank waiting for a message spins on a core,
// and on a host whose cores also run the kernel's network work that spinning slows the transfer
// it waits for (64 MB between two namespace hosts on this 2-core machine: 0.81 GB/s for
// MPI_Allreduce, 1.07 for the ring over MPI messages, while one TCP stream alone moves 3.4).
// Gloo (PyTorch's CPU backend) and Horovod's Gloo mode talk TCP themselves; so does this link.
// Each rank connects to the next one in rank order and accepts a connection from the previous
// one; a segment is sent from the buffer itself and received into it (all-gather) or into a
// staging chunk that is added in as soon as it is complete (reduce-scatter). One thread drives
// both sockets, non-blocking: it sends what the kernel takes, receives what has come, sums, and
// sleeps in poll() only when neither can move, so a waiting rank leaves its core to the kernel.
// Measured (scripts/bench-allreduce.sh with NETNS_HOSTS=1, the kvstore against raw
// MPI_Allreduce, medians of 5 rounds): 3 hosts on the 2 cores 3.9-12x from 64 KB to 1 MB and 4.9x
// at 32-64 MB; 2 hosts 1.4-2.4x up to 512 KB, about 1x from 1 to 16 MB, 1.63x at 64 MB (the MPI
// ring: 1.38-1.43x). Hence the ring from 64 KB over TCP.
// A link that closes (its rank ended) is an error naming the rank (in MPI_COMM_WORLD); a
// stalled one, or a setup that waits, is the collective watchdog's (Note [Collective deadline]).
// Connecting: every rank listens on a port of its own and publishes it with its IPv4 addresses
// (one MPI_Allgather): the addresses of COHORT_SOCKET_IFNAME, or of every interface that is up
// and not loopback. The connecting rank tries the next rank's addresses in turn; both sides
// check a hello carrying the job's token (drawn by rank 0) and their ranks, so a connection that
// reached another process (the same private address on two hosts) is dropped, not used.

// Connects every rank of `comm` to the next in rank order: a collective of `comm`, which must
// have at least two ranks. Returns null on every rank when any rank could not connect; `*why`
// then says why on the ranks that failed, and that another rank failed on the others.
// `ifname`: the interface whose addresses to publish; empty: every one up and not loopback.
std::unique_ptr<RingLink> ConnectTcpRing(MPI_Comm comm, const std::string& ifname,
                                         std::string* why);

}  // namespace cohort
