// PlanMemory: assigns every intermediate array of an executor to a block of memory, reusing a
// block once the array that held it is dead.
#pragma once

#include <cstdint>
#include <vector>

namespace cohort {

// Note [Static memory plan]
// At bind time the executor lists every array it will need besides the user's (op outputs and
// intermediate gradients) with its size and its lifetime in steps: forward steps in topological
// order, then backward steps in reverse; an array lives from the step that first writes it to
// the last step that reads it (backward reads the inputs and outputs its op declares it needs).
// Walking the steps in order, an array takes the smallest free block that fits, or a new block;
// when its last reader has run its block becomes free again. An op that allows it may write its
// output over an input that nothing reads afterwards (in-place), sharing the input's block.
// Every block is allocated once, at bind time: Forward and Backward allocate nothing. Arrays
// of different memory spaces (the contexts of a graph placed on several, Note [Device
// placement]) never share a block.
struct PlannedArray {
  int64_t size = 0;         // in bytes
  int first_step = 0;       // the step that writes it first
  int last_step = 0;        // the last step that reads it (>= first_step)
  int inplace_of = -1;      // an array whose block this one may take over at first_step
  bool persistent = false;  // never reused (outputs the user reads after Forward)
  int space = 0;            // the memory space (context) it lives in
};

struct MemoryPlan {
  std::vector<int> block_of;        // per array
  std::vector<int64_t> block_size;  // per block, in bytes
  std::vector<int> block_space;     // per block, the space of its arrays
  int64_t total() const;
};

MemoryPlan PlanMemory(const std::vector<PlannedArray>& arrays);

}  // namespace cohort
