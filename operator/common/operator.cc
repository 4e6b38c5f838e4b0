// The operator registry, parameter parsing and shape helpers.
#include "operator/common/operator.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <sstream>

namespace cohort {

GradReq ParseGradReq(std::string_view text) {
  if (text == "null") return GradReq::kNull;
  if (text == "write" || text == "inplace") return GradReq::kWrite;
  if (text == "add") return GradReq::kAdd;
  COHORT_THROW() << "unknown grad_req '" << text << "': expected null, write or add";
  return GradReq::kNull;
}

const char* GradReqName(GradReq req) {
  switch (req) {
    case GradReq::kNull: return "null";
    case GradReq::kWrite: return "write";
    case GradReq::kAdd: return "add";
  }
  return "?";
}

namespace op {

uint64_t Operator::NextId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

OpRegistry& OpRegistry::Get() {
  static OpRegistry registry;
  return registry;
}

// replicate.cc, sort.cc, pad.cc and optimizer_ops.cc (declared here rather than in operator.h,
// which every kernel includes).
void RegisterReplicate(OpRegistry& r);
void RegisterSort(OpRegistry& r);
void RegisterPad(OpRegistry& r);
void RegisterOptimizerOps(OpRegistry& r);

OpRegistry::OpRegistry() {
  RegisterFullyConnected(*this);
  RegisterActivations(*this);
  RegisterElemwise(*this);
  RegisterLossOutputs(*this);
  RegisterShapeOps(*this);
  RegisterConvolution(*this);
  RegisterPooling(*this);
  RegisterBatchNorm(*this);
  RegisterDropout(*this);
  RegisterEmbedding(*this);
  RegisterMaskedSoftmax(*this);
  RegisterSoftmax(*this);
  RegisterUnaryMath(*this);
  RegisterBroadcast(*this);
  RegisterLayerNorm(*this);
  RegisterMatmul(*this);
  RegisterReduce(*this);
  RegisterTranspose(*this);
  RegisterSlice(*this);
  RegisterArange(*this);
  RegisterRandom(*this);
  RegisterIndexOps(*this);
  RegisterCast(*this);
  RegisterReplicate(*this);
  RegisterSort(*this);
  RegisterPad(*this);
  RegisterOptimizerOps(*this);
}

void OpRegistry::Register(const std::string& name, Factory factory) {
  factories_[name] = std::move(factory);
}

void OpRegistry::Alias(const std::string& alias, const std::string& name) {
  aliases_[alias] = name;
}

// Note [Operator specs]
// Each operator file has a Specs() table of what its ops take (operator/common/op_spec.h),
// first printed from MXNet 1.9.1's registry by scripts/make_op_specs.py and edited to what
// Cohort accepts. It is the one list: ParamReader takes defaults, enum choices and the known
// attributes from it (the parse code names parameters but states no default), the Python
// package builds each constructor's signature and docstring from it (`_cohort.op_spec`), and
// `cohort-model ops` prints it. ParamReader::Finish checks that the parser read every declared
// parameter, so the table and the code cannot drift apart unnoticed: creating each op with its
// defaults (operator/op_spec_test.cc) reads every declaration.
void OpRegistry::Declare(OpSpec spec) {
  COHORT_CHECK(!specs_.count(spec.name)) << "operator " << spec.name << " declared twice";
  std::string name = spec.name;
  specs_.emplace(std::move(name), std::move(spec));
}

const OpSpec& OpRegistry::Spec(const std::string& name) const {
  auto it = specs_.find(Canonical(name));
  COHORT_CHECK(it != specs_.end()) << "unknown operator '" << name << "'";
  return it->second;
}

const std::string& OpRegistry::Canonical(const std::string& name) const {
  auto it = aliases_.find(name);
  return it == aliases_.end() ? name : it->second;
}

std::unique_ptr<Operator> OpRegistry::Create(const std::string& name, const Attrs& attrs) const {
  const std::string& canonical = Canonical(name);
  auto it = factories_.find(canonical);
  COHORT_CHECK(it != factories_.end()) << "unknown operator '" << name << "'";
  std::unique_ptr<Operator> op = it->second(attrs);
  op->type_ = canonical;
  op->attrs_ = attrs;
  return op;
}

std::vector<std::string> OpRegistry::Names() const {
  std::vector<std::string> out;
  for (const auto& [name, factory] : factories_) out.push_back(name);
  return out;
}

const ParamSpec* OpSpec::Param(const std::string& param) const {
  for (const ParamSpec& p : params) {
    if (p.name == param) return &p;
  }
  return nullptr;
}

std::vector<std::string> EnumChoices(const std::string& type) {
  std::vector<std::string> out;
  if (type.size() < 2 || type.front() != '{' || type.back() != '}') return out;
  std::string_view rest(type);
  rest = rest.substr(1, rest.size() - 2);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\'')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\'')) item.remove_suffix(1);
    out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

// ---- ParamReader --------------------------------------------------------------------------

ParamReader::ParamReader(const std::string& op, const Attrs& attrs)
    : spec_(OpRegistry::Get().Spec(op)), attrs_(attrs) {}

void ParamReader::Undeclared(const std::string& key, const std::string& what) const {
  throw Error(spec_.name + ": internal error: parameter '" + key + "': " + what +
                  " (the op's Specs() entry and its parser disagree)",
              __FILE__, __LINE__);
}

std::string ParamReader::Text(const std::string& key) {
  const ParamSpec* p = spec_.Param(key);
  if (!p) Undeclared(key, "read but not declared");
  used_.push_back(key);
  auto it = attrs_.find(key);
  if (it != attrs_.end()) return it->second;
  if (!p->default_text) {
    throw Error(spec_.name + ": required attribute '" + key + "' is missing (" + p->type + ": " +
                    p->doc + ")",
                __FILE__, __LINE__);
  }
  return *p->default_text;
}

void ParamReader::Bad(const std::string& key, const std::string& value,
                      const std::string& expected) const {
  throw Error(spec_.name + ": attribute " + key + "='" + value + "': expected " + expected,
              __FILE__, __LINE__);
}

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\'' || s.front() == '"')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\'' || s.back() == '"')) s.remove_suffix(1);
  return s;
}

template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  s = Trim(s);
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

bool IsNone(std::string_view s) { return Trim(s) == "None"; }

}  // namespace

int64_t ParamReader::Int(const std::string& key) {
  const std::string v = Text(key);
  int64_t out = 0;
  if (!ParseNumber(v, &out)) Bad(key, v, "an integer");
  return out;
}

std::optional<int64_t> ParamReader::OptionalInt(const std::string& key) {
  const std::string v = Text(key);
  if (IsNone(v)) return std::nullopt;
  int64_t out = 0;
  if (!ParseNumber(v, &out)) Bad(key, v, "an integer or None");
  return out;
}

namespace {

// A value's text as a number (inf and -inf too), a bool (MXNet's spellings) or a tuple;
// nullopt when malformed, for the reader to name the attribute.
std::optional<double> FloatOf(std::string_view text) {
  const std::string_view t = Trim(text);
  if (t == "inf") return HUGE_VAL;
  if (t == "-inf") return -HUGE_VAL;
  double out = 0;
  if (!ParseNumber(t, &out)) return std::nullopt;
  return out;
}

std::optional<bool> BoolOf(std::string_view text) {
  const std::string_view t = Trim(text);
  if (t == "True" || t == "true" || t == "1") return true;
  if (t == "False" || t == "false" || t == "0") return false;
  return std::nullopt;
}

std::optional<Shape> TupleOf(std::string_view text) {
  try {
    return Shape::Parse(Trim(text));
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

double ParamReader::Float(const std::string& key) {
  const std::string v = Text(key);
  if (const auto d = FloatOf(v)) return *d;
  Bad(key, v, "a number");
}

std::optional<double> ParamReader::OptionalFloat(const std::string& key) {
  const std::string v = Text(key);
  if (IsNone(v)) return std::nullopt;
  if (const auto d = FloatOf(v)) return d;
  Bad(key, v, "a number");
}

bool ParamReader::Bool(const std::string& key) {
  const std::string v = Text(key);
  if (const auto b = BoolOf(v)) return *b;
  Bad(key, v, "True or False");
}

std::optional<bool> ParamReader::OptionalBool(const std::string& key) {
  const std::string v = Text(key);
  if (IsNone(v)) return std::nullopt;
  if (const auto b = BoolOf(v)) return b;
  Bad(key, v, "True, False or None");
}

std::string ParamReader::String(const std::string& key) { return std::string(Trim(Text(key))); }

std::string ParamReader::Enum(const std::string& key) {
  const std::string v = Text(key);
  const std::vector<std::string> choices = EnumChoices(spec_.Param(key)->type);
  if (choices.empty()) Undeclared(key, "read as an enum but declared " + spec_.Param(key)->type);
  std::string t(Trim(v));
  if (std::find(choices.begin(), choices.end(), t) == choices.end()) {
    std::string expected = "one of";
    for (const auto& c : choices) expected += " " + c;
    Bad(key, v, expected);
  }
  return t;
}

Shape ParamReader::Tuple(const std::string& key) {
  const std::string v = Text(key);
  if (auto t = TupleOf(v)) return *t;
  Bad(key, v, "a tuple of integers such as (3, 3)");
}

std::optional<Shape> ParamReader::OptionalTuple(const std::string& key) {
  const std::string v = Text(key);
  if (IsNone(v)) return std::nullopt;
  if (auto t = TupleOf(v)) return t;
  Bad(key, v, "a tuple of integers such as (3, 3)");
}

void ParamReader::Finish() const {
  for (const auto& [key, value] : attrs_) {
    if (key.size() > 4 && key.starts_with("__") && key.ends_with("__")) continue;
    if (spec_.Param(key)) continue;
    std::string known;
    for (const ParamSpec& p : spec_.params) known += (known.empty() ? "" : ", ") + p.name;
    throw Error(spec_.name + ": unknown attribute '" + key + "' (it takes " +
                    (known.empty() ? std::string("no parameters") : known) + ")",
                __FILE__, __LINE__);
  }
  for (const ParamSpec& p : spec_.params) {
    if (std::find(used_.begin(), used_.end(), p.name) == used_.end()) {
      Undeclared(p.name, "declared but never read");
    }
  }
}

std::string AttrText(const Shape& s) {
  std::string out = "(";
  for (int i = 0; i < s.ndim(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}
std::string AttrText(bool b) { return b ? "True" : "False"; }
std::string AttrText(double d) {
  std::ostringstream out;
  out << d;
  return out.str();
}
std::string AttrText(int64_t i) { return std::to_string(i); }

// ---- Shapes -------------------------------------------------------------------------------

bool ShapeKnown(const Shape& s) {
  return s.ndim() > 0 && std::all_of(s.begin(), s.end(), [](int64_t d) { return d > 0; });
}

int NormalizeAxis(int axis, const Shape& s, const std::string& op) {
  const int a = axis < 0 ? axis + s.ndim() : axis;
  COHORT_CHECK(a >= 0 && a < s.ndim()) << op << ": axis " << axis << " out of range for " << s;
  return a;
}

void AssignShape(Shape& slot, const Shape& value, const std::string& op, const std::string& what) {
  if (value.ndim() == 0) return;
  if (slot.ndim() == 0) {
    slot = value;
    return;
  }
  bool agree = slot.ndim() == value.ndim();
  for (int d = 0; agree && d < slot.ndim(); ++d) {
    agree = !DimKnown(slot[d]) || !DimKnown(value[d]) || slot[d] == value[d];
  }
  COHORT_CHECK(agree) << op << ": " << what << " has shape " << slot << " but " << value
                      << " is expected";
  for (int d = 0; d < slot.ndim(); ++d) {
    if (!DimKnown(slot[d]) && DimKnown(value[d])) slot[d] = value[d];
  }
}

bool InferSameShape(std::vector<Shape>& in, std::vector<Shape>& out, const std::string& op) {
  AssignShape(out[0], in[0], op, "output");
  AssignShape(in[0], out[0], op, "data");
  return ShapeKnown(in[0]);
}

// Note [Operator dtypes]
// Types are inferred as shapes are (Symbol::InferType): each op fills the unknown types of its
// slots from the known ones, over passes until nothing changes; variables start from the types
// bound or given (`__dtype__`, type_dict) and whatever stays unknown is float32. Most ops give
// every slot one type (MXNet's ElemwiseType), so a float16 network infers float16 throughout;
// an op whose slots differ (Cast, whose output is its `dtype`) says so. What an op's kernels
// compute in is separate (TakesDType): binding refuses a node whose inputs or outputs have a
// type its kernels lack, naming it, so a kernel never reads memory as the wrong type.
bool Operator::InferType(TypeSlots& in, TypeSlots& out, TypeSlots& aux) const {
  if (in.empty()) {
    for (auto& t : out) AssignType(t, DType::kFloat32, type(), "output");
  }
  return InferSameType(*this, in, out, aux);
}

void AssignType(std::optional<DType>& slot, std::optional<DType> value, const std::string& op,
                const std::string& what) {
  if (!value) return;
  if (!slot) {
    slot = value;
    return;
  }
  COHORT_CHECK(*slot == *value) << op << ": " << what << " is " << *slot << " but " << *value
                                << " is expected (give every input of the op one dtype, or Cast)";
}

bool InferSameType(const Operator& op, TypeSlots& in, TypeSlots& out, TypeSlots& aux) {
  std::optional<DType> common;
  for (const TypeSlots* slots : {&in, &out, &aux}) {
    for (const auto& t : *slots) common = common ? common : t;
  }
  if (!common) return false;
  const std::vector<std::string> args = op.ListArguments();
  const std::vector<std::string> auxs = op.ListAuxiliaryStates();
  for (size_t i = 0; i < in.size(); ++i) {
    AssignType(in[i], common, op.type(), "input '" + (i < args.size() ? args[i] : "?") + "'");
  }
  for (auto& t : out) AssignType(t, common, op.type(), "output");
  for (size_t i = 0; i < aux.size(); ++i) {
    AssignType(aux[i], common, op.type(),
               "auxiliary state '" + (i < auxs.size() ? auxs[i] : "?") + "'");
  }
  return true;
}

std::string TakenDTypes(const Operator& op) {
  std::string list;
  for (DType d : kAllDTypes) {
    if (op.TakesDType(d)) list += (list.empty() ? "" : ", ") + std::string(DTypeName(d));
  }
  return list;
}

}  // namespace op
}  // namespace cohort
