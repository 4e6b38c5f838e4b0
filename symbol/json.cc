// MXNet symbol JSON: reading (1.x "attrs", and the older "param" / "attr") and writing.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>

#include "base/atomic_file.h"
#include "symbol/symbol.h"

namespace cohort {
namespace {

using Json = nlohmann::json;

// Attribute values are strings in MXNet's JSON; numbers and booleans are accepted as written.
op::Attrs ReadAttrs(const Json& object, const std::string& where) {
  op::Attrs attrs;
  if (object.is_null()) return attrs;
  COHORT_CHECK(object.is_object()) << where << ": attributes must be an object";
  for (const auto& [key, value] : object.items()) {
    attrs[key] = value.is_string() ? value.get<std::string>() : value.dump();
  }
  return attrs;
}

std::pair<size_t, int> ReadEntry(const Json& entry, size_t limit, const std::string& where) {
  // MXNet's reader takes [node, output] or [node, output, version], nothing longer.
  COHORT_CHECK(entry.is_array() && (entry.size() == 2 || entry.size() == 3) &&
               entry[0].is_number_integer() && entry[1].is_number_integer() &&
               (entry.size() == 2 || entry[2].is_number_integer()))
      << where << ": an input must be [node, output, version], got " << entry.dump();
  const auto node = entry[0].get<int64_t>();
  const auto index = entry[1].get<int64_t>();
  COHORT_CHECK(node >= 0 && static_cast<size_t>(node) < limit)
      << where << ": refers to node " << node << ", which is not defined before it";
  // (checked before it narrows: output 4294967296 read as output 0)
  COHORT_CHECK(index >= 0 && index <= std::numeric_limits<int>::max())
      << where << ": refers to output " << index << " of node " << node;
  return {static_cast<size_t>(node), static_cast<int>(index)};
}

// The deepest nesting of arrays and objects in JSON text (brackets inside strings not counted).
int NestingDepth(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

namespace {

// Note [Legacy symbol JSON]
// MXNet 0.8 wrote a node's operator parameters in "param" and its attributes in "attr" without
// the double underscores later versions use, and did not list auxiliary states as inputs. As
// MXNet's loader upgrades such a file (UpgradeJSON_000800_000900), "attr" keys become __key__
// (lr_mult -> __lr_mult__), an operator's <input>_lr_mult / <input>_wd_mult go to the variable
// <node>_<input> it reads, and the auxiliary states are made as variables <node>_<state>
// carrying the node's __attributes__.

// The graph of a parsed document: its heads.
std::vector<NodeEntry> FromDoc(const Json& doc) {
  const Json& nodes = doc["nodes"];
  std::vector<std::shared_ptr<SymbolNode>> made;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Json& n = nodes[i];
    const std::string where = "symbol JSON node " + std::to_string(i) +
                              (n.contains("name") ? " '" + n["name"].get<std::string>() + "'" : "");
    COHORT_CHECK(n.is_object() && n.contains("op") && n["op"].is_string() && n.contains("name") &&
                 n["name"].is_string() && n.contains("inputs"))
        << where << ": a node needs \"op\", \"name\" and \"inputs\" (MXNet's reader requires "
        << "all three)";
    for (const auto& [key, value] : n.items()) {  // MXNet's reader refuses any other field
      static const std::set<std::string> kNodeFields = {"op",        "name",  "inputs",
                                                        "attrs",     "attr",  "control_deps",
                                                        "subgraphs", "param", "backward_source_id"};
      COHORT_CHECK(kNodeFields.count(key)) << where << ": unknown field \"" << key << "\"";
    }
    auto node = std::make_shared<SymbolNode>();
    node->name = n["name"].get<std::string>();
    // 1.x keeps everything in "attrs"; older files put op parameters in "param" and node
    // attributes in "attr", which 0.8 wrote without underscores (Note [Legacy symbol JSON]).
    const std::string op = n["op"].get<std::string>();
    const bool legacy = n.contains("param");
    std::vector<std::pair<std::string, std::string>> input_mults;  // <input>_lr_mult, ...
    for (const char* key : {"param", "attr", "attrs"}) {
      if (!n.contains(key)) continue;
      for (auto& [k, v] : ReadAttrs(n[key], where)) {
        if (std::string_view(key) != "attr" || k.starts_with("__")) {
          node->attrs[k] = v;
        } else if (op != "null" && k.size() > 8 &&
                   (k.ends_with("_lr_mult") || k.ends_with("_wd_mult"))) {
          input_mults.emplace_back(k, v);
        } else {
          node->attrs["__" + k + "__"] = v;
        }
      }
    }
    if (op != "null") {
      try {
        node->impl =
            std::shared_ptr<const op::Operator>(op::OpRegistry::Get().Create(op, node->attrs));
      } catch (const Error& e) {
        COHORT_THROW() << where << ": " << e.message();
      }
      node->op = node->impl->type();
    }
    if (n.contains("inputs")) {
      COHORT_CHECK(n["inputs"].is_array()) << where << ": \"inputs\" must be an array";
      for (const Json& entry : n["inputs"]) {
        auto [id, index] = ReadEntry(entry, made.size(), where);
        COHORT_CHECK(index >= 0 && index < made[id]->num_outputs())
            << where << ": input refers to output " << index << " of node '" << made[id]->name
            << "', which has " << made[id]->num_outputs();
        node->inputs.push_back({made[id], index});
      }
    }
    for (const auto& [key, value] : input_mults) {  // to the input variable it names
      const std::string input = node->name + "_" + key.substr(0, key.size() - 8);
      const std::string mult = "__" + key.substr(key.size() - 7) + "__";
      bool moved = false;
      for (const NodeEntry& e : node->inputs) {
        if (e.node->is_variable() && e.node->name == input) {
          e.node->attrs[mult] = value;
          moved = true;
        }
      }
      if (!moved) node->attrs["__" + key + "__"] = value;
    }
    if (node->impl && legacy && node->inputs.size() == node->impl->ListArguments().size()) {
      // 0.8 did not list auxiliary states (BatchNorm's moving mean and variance) as inputs.
      op::Attrs inherited;
      for (const auto& [k, v] : node->attrs) {
        if (k.size() > 4 && k.starts_with("__") && k.ends_with("__")) inherited[k] = v;
      }
      for (const std::string& aux : node->impl->ListAuxiliaryStates()) {
        auto variable = std::make_shared<SymbolNode>();
        variable->name = node->name + "_" + aux;
        variable->attrs = inherited;
        // As composing it now marks them (Operator::InputInit): MXNet re-composes such nodes.
        if (std::string init = node->impl->InputInit(aux); !init.empty()) {
          variable->attrs["__init__"] = std::move(init);
        }
        node->inputs.push_back({variable, 0});
      }
    }
    if (node->impl) {
      const size_t expected =
          node->impl->ListArguments().size() + node->impl->ListAuxiliaryStates().size();
      COHORT_CHECK_EQ(node->inputs.size(), expected)
          << where << ": " << node->op << " needs " << expected << " inputs";
    } else {
      COHORT_CHECK(node->inputs.empty()) << where << ": a variable has no inputs";
    }
    made.push_back(std::move(node));
  }
  std::vector<NodeEntry> heads;
  for (const Json& h : doc["heads"]) {
    auto [id, index] = ReadEntry(h, made.size(), "symbol JSON heads");
    COHORT_CHECK(index >= 0 && index < made[id]->num_outputs())
        << "symbol JSON heads: output " << index << " of node '" << made[id]->name << "'";
    heads.push_back({made[id], index});
  }
  COHORT_CHECK(!heads.empty()) << "symbol JSON: no heads";
  return heads;
}

}  // namespace

Symbol Symbol::FromJSON(const std::string& text) {
  // MXNet's symbol JSON nests a few levels; a document nested thousands deep is refused while it
  // is parsed, before anything recursive (dump, the destructor) could overflow the stack: an
  // attribute nested 100,000 arrays deep ended in SIGSEGV.
  // (A linear scan: nlohmann's callback parser, which could stop at a depth, is quadratic in the
  // length of an array: 16 s for 300,000 nodes.)
  constexpr int kMaxDepth = 64;
  if (NestingDepth(text) > kMaxDepth) {
    throw ConfigError("symbol JSON: nested more than " + std::to_string(kMaxDepth) + " levels deep",
                      __FILE__, __LINE__);
  }
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::exception& e) {
    COHORT_THROW() << "symbol JSON: " << e.what();
  }
  COHORT_CHECK(doc.is_object() && doc.contains("nodes") && doc["nodes"].is_array() &&
               doc.contains("heads") && doc["heads"].is_array())
      << "symbol JSON: expected an object with \"nodes\" and \"heads\" arrays";
  for (const auto& [key, value] : doc.items()) {  // MXNet's reader refuses any other field
    COHORT_CHECK(key == "nodes" || key == "arg_nodes" || key == "heads" || key == "node_row_ptr" ||
                 key == "attrs")
        << "symbol JSON: unknown field \"" << key << "\"";
  }
  // The graph's attributes are [type, value] pairs, as MXNet writes and requires them
  // (["int", 10901] for mxnet_version).
  if (doc.contains("attrs")) {
    COHORT_CHECK(doc["attrs"].is_object()) << "symbol JSON: \"attrs\" must be an object";
    for (const auto& [key, value] : doc["attrs"].items()) {
      COHORT_CHECK(value.is_array() && value.size() == 2 && value[0].is_string() &&
                   (key != "mxnet_version" || value[1].is_number_integer()))
          << "symbol JSON: graph attribute '" << key << "' must be [type, value], got "
          << value.dump();
    }
  }
  // A value of the wrong JSON type anywhere (a name that is a number, a node that is not an
  // object) is reported as what it is, not as an escaped nlohmann::type_error (found by fuzzing).
  std::vector<NodeEntry> heads;
  try {
    heads = FromDoc(doc);
  } catch (const Json::exception& e) {
    throw Error(std::string("symbol JSON: ") + e.what(), __FILE__, __LINE__);
  }
  // (after the nodes, whose errors say more)
  COHORT_CHECK(doc.contains("arg_nodes") && doc["arg_nodes"].is_array())
      << "symbol JSON: no \"arg_nodes\" array (MXNet's reader requires one)";
  // Cohort finds the arguments itself, but MXNet reads these as 32-bit unsigned numbers.
  for (const char* key : {"arg_nodes", "node_row_ptr"}) {
    if (!doc.contains(key)) continue;
    COHORT_CHECK(doc[key].is_array()) << "symbol JSON: \"" << key << "\" must be an array";
    for (const Json& v : doc[key]) {
      COHORT_CHECK(v.is_number_unsigned() && v.get<uint64_t>() <= 0xffffffffu)
          << "symbol JSON: \"" << key << "\" holds " << v.dump()
          << ", not a node number (0 to 2^32 - 1)";
    }
  }
  return Symbol(std::move(heads));
}

std::string Symbol::ToJSON() const {
  const auto order = TopoOrder();
  std::unordered_map<const SymbolNode*, int> id;
  Json nodes = Json::array(), arg_nodes = Json::array(), row_ptr = Json::array({0});
  int rows = 0;
  for (const auto& node : order) {
    id[node.get()] = static_cast<int>(nodes.size());
    Json n = {{"op", node->is_variable() ? "null" : node->op}, {"name", node->name}};
    if (!node->attrs.empty()) n["attrs"] = node->attrs;
    Json inputs = Json::array();
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const NodeEntry& e = node->inputs[i];
      // nnvm marks auxiliary states, which the op mutates, with version 1.
      const int version = static_cast<int>(i) >= node->num_arguments() ? 1 : 0;
      inputs.push_back({id.at(e.node.get()), e.index, version});
    }
    n["inputs"] = inputs;
    if (node->is_variable()) arg_nodes.push_back(id[node.get()]);
    rows += node->num_outputs();
    row_ptr.push_back(rows);
    nodes.push_back(std::move(n));
  }
  Json heads = Json::array();
  for (const NodeEntry& e : outputs_) heads.push_back({id.at(e.node.get()), e.index, 0});
  Json doc = {{"nodes", nodes},
              {"arg_nodes", arg_nodes},
              {"node_row_ptr", row_ptr},
              {"heads", heads},
              {"attrs", {{"mxnet_version", {"int", 10901}}}}};
  return doc.dump(2);
}

void Symbol::Save(const std::string& path) const {
  const std::string text = ToJSON();
  AtomicFileWriter writer(path);
  writer.Write(text.data(), text.size());
  writer.Commit();
}

Symbol Symbol::Load(const std::string& path) {
  std::ifstream in(path);
  COHORT_CHECK(in.good()) << "cannot open symbol file '" << path << "'";
  std::stringstream text;
  text << in.rdbuf();
  try {
    return FromJSON(text.str());
  } catch (const Error& e) {
    COHORT_THROW() << "'" << path << "': " << e.message();
  }
  return Symbol();
}

}  // namespace cohort
