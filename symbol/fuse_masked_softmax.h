// The attention's scale, mask and softmax as one op (Note [Masked softmax fusion]).
#pragma once

#include <map>
#include <set>
#include <string>

#include "symbol/symbol.h"

namespace cohort {

// Note [Masked softmax fusion]
// A transformer's attention weights are softmax(scores · scale + mask): as written (MXNet has no
// masked softmax) they are three passes over the (batch·heads, time, time) scores, five under
// mixed precision, where the AMP pass casts the low-precision scores to float32 for the add
// with the float32 mask and the probabilities back for the next batch_dot. Binding (Executor,
// unless COHORT_FUSE_OPS=0) replaces each chain
//     _mul_scalar → [amp_cast float32] → broadcast_add(·, mask) → softmax → [amp_cast T]
// with one _masked_softmax(data, mask) named as the softmax, which reads the scores once in
// their own type and writes the probabilities once in the output's, with the same values bit
// for bit (Note [Masked softmax values]). Backward recomputes the probabilities from the scores
// instead of keeping them. A chain is fused only where nothing else reads its inner entries (no
// other op, no graph output), the softmax is over the last axis without temperature or lengths,
// the mask broadcasts over the scores' leading axes only, and the mask takes no gradient.
// `shapes`: the variables' shapes by name; `with_grad`: the variables that take a gradient. A
// graph whose shapes cannot be inferred is returned as it is (binding then says why).
Symbol FuseMaskedSoftmax(const Symbol& symbol, const std::map<std::string, Shape>& shapes,
                         const std::set<std::string>& with_grad);

}  // namespace cohort
