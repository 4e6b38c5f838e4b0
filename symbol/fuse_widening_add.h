// elemwise_add and the amp_casts that widen its inputs as one op (Note [Widening add fusion],
// operator/cast.cc).
#pragma once

#include <map>
#include <string>

#include "symbol/symbol.h"

namespace cohort {

// The symbol with each elemwise_add that reads amp_casts to float32 of float16/bfloat16 arrays
// (read by the add alone, no graph output) replaced by a _widening_add of the casts' inputs.
// `dtypes`: the variables' types by name; a graph whose types cannot be inferred is returned as
// it is (binding then says why).
Symbol FuseWideningAdd(const Symbol& symbol, const std::map<std::string, DType>& dtypes);

}  // namespace cohort
