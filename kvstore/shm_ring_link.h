// The ring all-reduce's link through shared memory between the ranks of one host
// (Note [Shared-memory ring]).
#pragma once

#include <mpi.h>

#include <chrono>
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
// MPI messages. A rank that waits spins, then yields its core (Note [Waiting in the shared-
// memory ring]); a peer that stalls is the collective watchdog's to end (Note [Collective
// deadline]), and a peer that dies ends the job through mpirun.
// The segment is a POSIX shared-memory object made by the first rank, opened by the others and
// unlinked once all have mapped it: from then on nothing is left in /dev/shm when a rank is
// killed (a rank killed while the ranks connect can leave it behind).

// Connects every rank of `comm` to its ring neighbours through one shared segment: a collective
// of `comm`, whose ranks must all share this host and pass the same `chunk_bytes`. Returns null
// on every rank when any rank could not map the segment or passed another chunk size (`*why`
// says why there; that another rank failed on the others).
std::unique_ptr<RingLink> ConnectShmRing(MPI_Comm comm, int64_t chunk_bytes, std::string* why);

// Note [Waiting in the shared-memory ring]
// A rank waiting for its neighbour used to yield its core after 256 pauses (about 10 us). With
// another program busy beside the job (2 ranks and one busy loop on 2 cores) a rank then shares
// its core with that program, and on Linux's EEVDF scheduler (6.6 on) sched_yield hands it the
// rest of the slice: the rank comes back milliseconds later, in the middle of an all-reduce its
// neighbour spins in. Open MPI does not yield unless its ranks outnumber the cores
// (mpi_yield_when_idle), and its rounds kept their quiet speed where the ring's lost whole
// slices. So a wait spins up to 5 ms, about a scheduler slice, before it yields, unless the ranks
// outnumber the CPUs they may run on (the union of their affinity masks, CpusOfRanks): there a
// spinning rank would hold the core its neighbour needs (4 ranks on 2 cores spinning: 16 MB in
// 185 ms instead of 10), and it yields after the 256 pauses as before.
// Measured on a 2-core Intel Xeon VM (kernel 6.18), 2 ranks, `MPI_CONTROL=1 scripts/bench-
// allreduce.sh 2 64K 64M 20 5` beside one `while :; do :; done`, three runs each: the kvstore's
// worst round against raw MPI's was 0.01-0.26 at 64 KB, 128 KB, 1 MB and 4 MB before, 14 of the
// 33 sizes-and-runs under 0.7; now none is under 0.49 but at 8 MB, 11 under 0.7. At 8 MB (0.21
// to 0.79) raw MPI against itself in the same runs reaches 0.22 to 0.75 (a round fits a slice
// or misses it), and at other sizes 0.62 to 0.97. Quiet medians unchanged (1.7-1.8x MPI at
// 64 KB, 0.85-1.05x from 512 KB to 16 MB, 1.8-2.5x at 32-64 MB). Training is not slowed: GPT of
// configs/text_gpt.yaml on 2 ranks, 25.6, 22.7, 27.8 -> 26.4, 26.6, 27.9 thousand tokens/s.
// What is left at 8 MB is the scheduler's, not the ring's: timed in the same processes, a
// reduction of each in turn (mpi_allreduce_peer's paired mode), both lose a whole slice in about
// a third of their 8 MB reductions beside the busy loop (MPI 37%, the kvstore 35% of 240; the
// others 1.24 and 1.33 ms, the slow ones about 5.3 ms), so a median of 20 lands on either side
// from one round to the next, for both alike. Paired, medians of 50 (scripts/bench-allreduce.sh's
// defaults since): the kvstore's worst round of 5 at least 0.87x MPI's at every size from 64 KB
// to 64 MB in three runs (0.91, 1.03 and 1.05 at 8 MB); medians of 20, two runs: 0.59 and 0.26
// at 8 MB, at least 0.86 elsewhere.

// How many CPUs the ranks of `comm` may run on together: a collective.
int CpusOfRanks(MPI_Comm comm);
// How long a wait in the shared-memory ring spins before it yields, for `ranks` on `cpus`.
std::chrono::nanoseconds ShmRingSpin(int ranks, int cpus);

}  // namespace cohort
