#include "core/memory/memory_budget.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

TEST(MemoryBudgetTest, ParsesSizesWithUnits) {
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("24GiB"), 24ull << 30);
  EXPECT_EQ(*ParseByteSize("512MiB"), 512ull << 20);
  EXPECT_EQ(*ParseByteSize("1.5GB"), 1'500'000'000ull);
  EXPECT_EQ(*ParseByteSize("2Mi"), 2ull << 20);
  EXPECT_EQ(*ParseByteSize("10B"), 10u);
  EXPECT_FALSE(ParseByteSize("lots").ok());
  EXPECT_FALSE(ParseByteSize("-1GiB").ok());
  EXPECT_FALSE(ParseByteSize("").ok());
}

TEST(MemoryBudgetTest, ParsesPerDeviceBudgets) {
  auto budgets = ParseMemoryBudgets("cpu=24GiB,cuda:0=60GiB");
  ASSERT_TRUE(budgets.ok()) << budgets.status();
  EXPECT_THAT(*budgets,
              UnorderedElementsAre(Pair("cpu", 24ull << 30), Pair("cuda:0", 60ull << 30)));
}

TEST(MemoryBudgetTest, RejectsMalformedBudgetsWithAnActionableMessage) {
  EXPECT_THAT(std::string(ParseMemoryBudgets("24GiB").status().message()),
              HasSubstr("must be DEVICE=SIZE"));
  EXPECT_THAT(std::string(ParseMemoryBudgets("tpu=1GiB").status().message()),
              HasSubstr("not a device"));
  EXPECT_THAT(std::string(ParseMemoryBudgets("cpu=1GiB,cpu=2GiB").status().message()),
              HasSubstr("given twice"));
}

TEST(MemoryBudgetTest, DefaultCpuBudgetLeavesTwentyPercentHeadroom) {
  const uint64_t machine = MachineMemoryBytes();
  ASSERT_GT(machine, 0u);
  EXPECT_EQ(DefaultBudgetBytes("cpu"), machine / 10 * 8);
}

TEST(MemoryBudgetTest, FormatsBytesForMessages) {
  EXPECT_EQ(FormatBytes(10), "10 B");
  EXPECT_EQ(FormatBytes(3ull << 29), "1.5 GiB");
}

}  // namespace
}  // namespace inferd
