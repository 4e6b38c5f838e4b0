// PlanMemory (Note [Static memory plan]).
#include "executor/memory_plan.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "base/error.h"

namespace cohort {

int64_t MemoryPlan::total() const {
  return std::accumulate(block_size.begin(), block_size.end(), int64_t{0});
}

MemoryPlan PlanMemory(const std::vector<PlannedArray>& arrays) {
  MemoryPlan plan;
  plan.block_of.assign(arrays.size(), -1);
  // Arrays in the order they are first written; ties keep the caller's order.
  std::vector<int> order(arrays.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return arrays[a].first_step < arrays[b].first_step; });
  std::multimap<std::pair<int, int64_t>, int> free_blocks;  // (space, size) -> block
  // Blocks in use, by the step after which they become free.
  std::multimap<int, int> busy_until;
  std::vector<int> block_last(0);  // last step each block is used
  for (int a : order) {
    const PlannedArray& pa = arrays[a];
    COHORT_CHECK(pa.first_step <= pa.last_step)
        << "PlanMemory: array " << a << " dies before it lives";
    // Blocks whose arrays were last read before this step can be taken.
    while (!busy_until.empty() && busy_until.begin()->first < pa.first_step) {
      const int block = busy_until.begin()->second;
      busy_until.erase(busy_until.begin());
      free_blocks.emplace(std::make_pair(plan.block_space[block], plan.block_size[block]), block);
    }
    int block = -1;
    if (pa.inplace_of >= 0) {
      const int src = pa.inplace_of;
      const int src_block = plan.block_of[src];
      // The input dies at this step and fits: continue in its block.
      if (src_block >= 0 && !arrays[src].persistent && arrays[src].last_step == pa.first_step &&
          arrays[src].space == pa.space && plan.block_size[src_block] >= pa.size &&
          block_last[src_block] == pa.first_step) {
        block = src_block;
        for (auto it = busy_until.begin(); it != busy_until.end(); ++it) {
          if (it->second == block) {
            busy_until.erase(it);
            break;
          }
        }
      }
    }
    if (block < 0 && !pa.persistent) {
      // The smallest free block of the space that fits.
      auto it = free_blocks.lower_bound({pa.space, pa.size});
      const auto space_end = free_blocks.lower_bound({pa.space + 1, 0});
      if (it != space_end) {
        block = it->second;
        free_blocks.erase(it);
      } else if (it != free_blocks.begin() && std::prev(it)->first.first == pa.space) {
        // Grow the space's largest free block rather than add one.
        auto largest = std::prev(it);
        block = largest->second;
        free_blocks.erase(largest);
        plan.block_size[block] = pa.size;
      }
    }
    if (block < 0) {
      block = static_cast<int>(plan.block_size.size());
      plan.block_size.push_back(pa.size);
      plan.block_space.push_back(pa.space);
      block_last.push_back(0);
    }
    plan.block_of[a] = block;
    block_last[block] = pa.persistent ? INT32_MAX : pa.last_step;
    if (!pa.persistent) busy_until.emplace(pa.last_step, block);
  }
  return plan;
}

}  // namespace cohort
