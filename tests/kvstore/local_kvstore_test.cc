// The local kvstore's contract (MXNet's KVStore): Push sums over devices, Pull copies the stored
// value out, an optimizer updates the stored weight with the sum, and a PushPull whose outputs
// are its values sums in place without touching the store (Note [In-place PushPull]).
#include <gtest/gtest.h>

#include "kvstore/kvstore.h"
#include "tests/test_util.h"

namespace cohort {
namespace {

using testing::ErrorOf;
using Values = std::vector<std::vector<NDArray>>;

NDArray Vec(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return NDArray::FromVector<float>({n}, v);
}

TEST(LocalKVStore, PushSumsDevicesAndPullCopiesTheSumOut) {
  auto kv = KVStore::Create("local");
  kv->Init({3, 7}, {Vec({0, 0}), Vec({0, 0, 0})});
  kv->Push({3, 7}, {{Vec({1, 2}), Vec({10, 20})}, {Vec({1, 1, 1}), Vec({2, 2, 2})}});
  NDArray a = Vec({9, 9}), b = Vec({9, 9}), c = Vec({9, 9, 9});
  kv->Pull({3, 7}, {{a, b}, {c}});
  EXPECT_EQ(a.ToVector<float>(), (std::vector<float>{11, 22}));
  EXPECT_EQ(b.ToVector<float>(), (std::vector<float>{11, 22}));
  EXPECT_EQ(c.ToVector<float>(), (std::vector<float>{3, 3, 3}));
  // A second push replaces the stored sum; it does not add to it.
  kv->Push({3}, {{Vec({1, 1}), Vec({1, 1})}});
  kv->Pull({3}, {{a}});
  EXPECT_EQ(a.ToVector<float>(), (std::vector<float>{2, 2}));
}

// A key twice in one call (values were lost, or applied twice) and a value of another shape or
// dtype are errors naming the key.
TEST(LocalKVStore, PushNamesARepeatedKeyOrAValueThatDoesNotFit) {
  auto kv = KVStore::Create("local");
  kv->Init({3, 7}, {Vec({0, 0}), Vec({0, 0, 0})});
  const std::string twice = "key 3 appears twice in one call";
  EXPECT_NE(ErrorOf([&] { kv->Push({3, 7, 3}, {{Vec({1, 2})}, {Vec({1, 1, 1})}, {Vec({1, 2})}}); })
                .find("kvstore Push: " + twice),
            std::string::npos);
  NDArray a = Vec({1, 2}), b = Vec({3, 4});
  EXPECT_NE(ErrorOf([&] { kv->PushPull({3, 3}, {{a}, {b}}, {{a}, {b}}); })
                .find("kvstore PushPull: " + twice),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { kv->Push({7}, {{Vec({1, 2})}}); })
                .find("a float32 value of shape (2,) for key 7 of shape (3,)"),
            std::string::npos);
  const NDArray doubles = NDArray::Zeros({2}, DType::kFloat64);
  EXPECT_NE(ErrorOf([&] { kv->Push({3}, {{doubles}}); }).find("a float64 value"),
            std::string::npos);
}

TEST(LocalKVStore, AnOptimizerUpdatesTheStoredWeightWithTheSum) {
  auto kv = KVStore::Create("local");
  kv->Init({0}, {Vec({1, 1})});
  kv->SetOptimizer(Optimizer::Create("sgd", {.lr = 0.5}));
  NDArray out = Vec({0, 0});
  kv->PushPull({0}, {{Vec({1, 2}), Vec({3, 4})}}, {{out}});
  EXPECT_EQ(out.ToVector<float>(), (std::vector<float>{1 - 0.5f * 4, 1 - 0.5f * 6}));
}

TEST(LocalKVStore, InPlacePushPullLeavesTheSumInEveryDevicesValue) {
  auto kv = KVStore::Create("local");
  kv->Init({1, 2}, {Vec({5, 5}), Vec({5})});
  NDArray a = Vec({1, 2}), b = Vec({10, 20}), c = Vec({100, 200}), d = Vec({4});
  const Values values = {{a, b, c}, {d}};
  kv->PushPull({1, 2}, values, values);
  for (const NDArray& v : {a, b, c}) EXPECT_EQ(v.ToVector<float>(), (std::vector<float>{111, 222}));
  EXPECT_EQ(d.ToVector<float>(), (std::vector<float>{4}));
  // The store kept nothing of the sum: a Pull still gives the initial value.
  NDArray out = Vec({0, 0});
  kv->Pull({1}, {{out}});
  EXPECT_EQ(out.ToVector<float>(), (std::vector<float>{5, 5}));
  // Separate outputs go through the store as before.
  NDArray e = Vec({0, 0}), f = Vec({0, 0});
  kv->PushPull({1}, {{Vec({1, 1}), Vec({2, 2})}}, {{e, f}});
  EXPECT_EQ(f.ToVector<float>(), (std::vector<float>{3, 3}));
  kv->Pull({1}, {{out}});
  EXPECT_EQ(out.ToVector<float>(), (std::vector<float>{3, 3}));
}

TEST(LocalKVStore, InPlacePushPullNamesAKeyOfAnotherShapeOrNotInitialised) {
  auto kv = KVStore::Create("local");
  kv->Init({4}, {Vec({0, 0})});
  NDArray wrong = Vec({1, 2, 3});
  try {
    kv->PushPull({4}, {{wrong}}, {{wrong}});
    FAIL() << "a value of shape (3,) was summed for a key of shape (2,)";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("for key 4 of shape (2,)"), std::string::npos) << e.message();
  }
  NDArray v = Vec({1, 2});
  try {
    kv->PushPull({5}, {{v}}, {{v}});
    FAIL() << "key 5 was never Init'ed";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("key 5 was not Init'ed"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace cohort
