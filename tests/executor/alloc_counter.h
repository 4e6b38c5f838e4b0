// Counts heap allocations (operator new) made while an AllocationCounter is alive.
#pragma once

#include <cstdint>

namespace cohort::testing {

class AllocationCounter {
 public:
  AllocationCounter();
  ~AllocationCounter();
  int64_t count() const;
};

}  // namespace cohort::testing
