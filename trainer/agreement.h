// Before training, the workers of a job check that they agree on what must agree
// (Note [Agreement]).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kvstore/kvstore.h"

namespace cohort {

// Note [Agreement]
// Workers that differ in what they train (another symbol or parameter shape, batch, optimizer,
// epoch count) leave one of them waiting in a collective the others never reach: epochs 2 against
// 1 hung, num_classes 10 against 5 ended in MPI_ERR_TRUNCATE. So before the first collective of
// training each worker hashes every item (FNV-1a, 64 bits, split into four 16-bit parts so that
// doubles hold them exactly) and one SumAcrossWorkers of each part and its square tells every
// worker whether all hold the same value (sum = n·v and sum of squares = n·v² only when every
// value is v). A worker that differs throws a ConfigError naming the items and its own values;
// its AbortDistributedJob ends the job (Note [No hang]).
//
// items: (name, this worker's value as text). Does nothing for a single worker.
void CheckWorkersAgree(KVStore& kvstore, const std::vector<std::pair<std::string, std::string>>& items);

}  // namespace cohort
