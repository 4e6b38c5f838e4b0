// The ring all-reduce's link through shared memory between the ranks of one host
// (Note [Shared-memory ring]).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

#include "kvstore/ring_allreduce.h"

namespace cohort {

// Note [Shared-memory ring]
// Over MPI messages on one host, each segment the ring passes is copied by Open MPI's shared-
// memory transport (vader: a handshake per message, then a kernel copy between the processes,
// process_vm_readv, that pins the sender's pages one by one) into a staging chunk, then added:
// 64 MB between 2 ranks took about 20 ms (3.3 GB/s), while this machine's memory adds 64 MB into
// 64 MB in about 8 ms with both cores busy. This link passes the chunks through a small shared
// segment instead: each rank owns a few slots of `chunk_bytes`, copies what it sends into its
// slots and counts them (`produced`); the next rank adds (or copies) straight out of them and
// counts what it took (`consumed`), which frees the slot. The counters are 64-bit atomics in the
// segment, each written by one rank only and never reset, so consecutive exchanges need no
// handshake. The slots stay in the caches, so a float crosses memory about as often as in the
// sum itself. The order of the additions is the ring's, so the bits are those of the ring over
// MPI messages. A rank that waits spins briefly, then yields its core (several ranks may share
// one); a peer that stalls is the collective watchdog's to end (Note [Collective deadline]), and
// a peer that dies ends the job through mpirun.
// The segment is a POSIX shared-memory object made by the first rank, opened by the others and
// unlinked once all have mapped it: from then on nothing is left in /dev/shm when a rank is
// killed (a rank killed while the ranks connect can leave it behind).

// Connects every rank of `comm` to its ring neighbours through one shared segment: a collective
// of `comm`, whose ranks must all share this host and pass the same `chunk_bytes`. Returns null
// on every rank when any rank could not map the segment or passed another chunk size (`*why`
// says why there; that another rank failed on the others).
std::unique_ptr<RingLink> ConnectShmRing(MPI_Comm comm, int64_t chunk_bytes, std::string* why);

}  // namespace cohort
