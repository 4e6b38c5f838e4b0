// DataDesc layouts.
#include "io/data_desc.h"

namespace cohort {

int BatchAxisOf(const std::string& layout) {
  const auto n = layout.find('N');
  return n == std::string::npos ? 0 : static_cast<int>(n);
}

int DataDesc::BatchAxis() const { return BatchAxisOf(layout); }

std::string DefaultLayout(int ndim) {
  switch (ndim) {
    case 1: return "N";
    case 2: return "NC";
    case 3: return "NCW";
    case 4: return "NCHW";
    case 5: return "NCDHW";
    default: {
      std::string layout(ndim > 0 ? ndim : 0, 'C');
      if (!layout.empty()) layout[0] = 'N';
      return layout;
    }
  }
}

}  // namespace cohort
