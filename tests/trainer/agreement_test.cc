// CheckWorkersAgree (Note [Agreement]) against a kvstore that plays a second worker.
#include "trainer/agreement.h"

#include <gtest/gtest.h>

#include "kvstore/host_kvstore.h"

namespace cohort {
namespace {

// Two workers; the other one holds the same values, except in item `differ` (-1: none).
class TwoWorkers : public HostKVStore {
 public:
  explicit TwoWorkers(int differ)
      : HostKVStore("two_workers", CreateSingleWorkerComm()), differ_(differ) {}
  int num_workers() const override { return 2; }
  void SumAcrossWorkers(std::span<double> values) override {
    for (size_t k = 0; k < values.size(); ++k) {
      const bool other = static_cast<int>(k / 8) == differ_;  // 4 parts x (value, square)
      values[k] += other ? values[k] + 1 : values[k];
    }
  }

 private:
  int differ_;
};

const std::vector<std::pair<std::string, std::string>> kItems = {
    {"symbol", "{...}"}, {"epochs", "0 to 2"}, {"seed", "1"}};

TEST(Agreement, WorkersThatAgreePass) {
  TwoWorkers kv(-1);
  EXPECT_NO_THROW(CheckWorkersAgree(kv, kItems));
}

TEST(Agreement, AnItemThatDiffersIsNamedWithThisWorkersValue) {
  TwoWorkers kv(1);
  try {
    CheckWorkersAgree(kv, kItems);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(e.message().find("the 2 workers do not train the same thing; they differ in epochs "
                               "(here: 0 to 2)"),
              std::string::npos)
        << e.message();
    EXPECT_EQ(e.message().find("symbol"), std::string::npos) << e.message();
  }
}

TEST(Agreement, OneWorkerHasNothingToCheck) {
  auto kv = KVStore::Create("local");
  EXPECT_NO_THROW(CheckWorkersAgree(*kv, kItems));
}

}  // namespace
}  // namespace cohort
