#include "shm/shared_memory_registry.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "core/types/bytes_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "shm/testing/shm_object.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ShmObject;

// The owner of most tests' regions (frontends pass the caller's tenant).
constexpr std::string_view kAlice = "alice";

std::vector<float> FloatsOf(const Tensor& tensor) {
  const float* data = tensor.data_as<float>();
  return std::vector<float>(data, data + tensor.byte_size() / sizeof(float));
}

TEST(SharedMemoryRegistryTest, ReadsAnInputAtItsOffsetWithinTheRegisteredWindow) {
  ShmObject object(64);
  object.WriteValues<float>(16 + 8, {1.5f, -2.0f, 3.25f});
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register(kAlice, "in", object.key(), 16, 32).ok());

  absl::StatusOr<SharedMemorySlice> slice = registry.Slice(kAlice, {"in", 8, 12}, "input 'x'");
  ASSERT_TRUE(slice.ok()) << slice.status();
  absl::StatusOr<Tensor> tensor = registry.ReadTensor(*slice, DataType::kFp32, {3}, "input 'x'");
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_THAT(FloatsOf(*tensor), ElementsAre(1.5f, -2.0f, 3.25f));
}

TEST(SharedMemoryRegistryTest, WritesOutputsIntoTheirSlicesAndRefusesOneTooLarge) {
  ShmObject object(32);
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register(kAlice, "out", object.key(), 8, 24).ok());
  absl::StatusOr<Tensor> y = Tensor::Allocate(DataType::kFp32, {2});
  ASSERT_TRUE(y.ok());
  y->mutable_data_as<float>()[0] = 7.0f;
  y->mutable_data_as<float>()[1] = 8.5f;
  InferResponse response;
  response.outputs.push_back(NamedTensor{"y", *y});

  SharedMemoryOutputs outputs;
  outputs.Add("y", *registry.Slice(kAlice, {"out", 4, 8}, "output 'y'"));
  ASSERT_TRUE(outputs.WriteAll(response).ok());
  EXPECT_THAT(object.ReadValues<float>(8 + 4, 2), ElementsAre(7.0f, 8.5f));

  SharedMemoryOutputs small;
  small.Add("y", *registry.Slice(kAlice, {"out", 0, 4}, "output 'y'"));
  absl::Status refused = small.WriteAll(response);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("output 'y' has 8 bytes, more than"));
}

TEST(SharedMemoryRegistryTest, ChecksEveryWindowAgainstWhatContainsIt) {
  ShmObject object(64);
  SharedMemoryRegistry registry;
  // The region must fit the object; offset + size overflowing 64 bits must not wrap.
  EXPECT_EQ(registry.Register(kAlice, "r", object.key(), 60, 8).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register(kAlice, "r", object.key(), UINT64_MAX, 2).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register(kAlice, "r", object.key(), 0, 0).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(registry.Register(kAlice, "r", object.key(), 0, 64).ok());
  // A tensor's window must fit the region.
  EXPECT_EQ(registry.Slice(kAlice, {"r", 60, 8}, "input 'x'").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Slice(kAlice, {"r", UINT64_MAX, 2}, "input 'x'").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Slice(kAlice, {"other", 0, 4}, "input 'x'").status().code(),
            absl::StatusCode::kNotFound);
  // And its byte size must be what the shape needs.
  absl::StatusOr<Tensor> mismatched = registry.ReadTensor(
      *registry.Slice(kAlice, {"r", 0, 12}, "input 'x'"), DataType::kFp32, {4}, "input 'x'");
  EXPECT_EQ(mismatched.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mismatched.status().message(), HasSubstr("needs 4 x 4 bytes"));
}

TEST(SharedMemoryRegistryTest, ValidatesBytesElementsReadFromSharedMemory) {
  ShmObject object(64);
  std::string serialized;
  AppendBytesElement("ab", serialized);
  AppendBytesElement("cde", serialized);
  object.Write(0, serialized.data(), serialized.size());
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register(kAlice, "r", object.key(), 0, 64).ok());

  absl::StatusOr<Tensor> tensor =
      registry.ReadTensor(*registry.Slice(kAlice, {"r", 0, serialized.size()}, "input 's'"),
                          DataType::kBytes, {2}, "input 's'");
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_THAT(BytesElements(*tensor), ElementsAre("ab", "cde"));
  // The same bytes read as three elements: the lengths do not add up.
  EXPECT_EQ(registry
                .ReadTensor(*registry.Slice(kAlice, {"r", 0, serialized.size()}, "input 's'"),
                            DataType::kBytes, {3}, "input 's'")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SharedMemoryRegistryTest, AnObjectShrunkAfterRegistrationFailsTheRequestInsteadOfCrashing) {
  ShmObject object(4096);
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register(kAlice, "r", object.key(), 0, 4096).ok());
  absl::StatusOr<SharedMemorySlice> slice = registry.Slice(kAlice, {"r", 1024, 1024}, "input 'x'");
  ASSERT_TRUE(slice.ok());
  object.Resize(512);  // a mapping of it would now raise SIGBUS on access

  absl::StatusOr<Tensor> read = registry.ReadTensor(*slice, DataType::kFp32, {256}, "input 'x'");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(read.status().message(), HasSubstr("has shrunk"));

  absl::StatusOr<Tensor> y = Tensor::Allocate(DataType::kFp32, {4});
  InferResponse response;
  response.outputs.push_back(NamedTensor{"y", *y});
  SharedMemoryOutputs outputs;
  outputs.Add("y", *slice);
  EXPECT_EQ(outputs.WriteAll(response).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(SharedMemoryRegistryTest, RefusesKeysThatAreNotOneSharedMemoryName) {
  SharedMemoryRegistry registry;
  const std::vector<std::string> keys = {
      "", "/", "/../etc/passwd", "a/b", "/.", "/..", std::string("/") + std::string(300, 'k')};
  for (const std::string& key : keys) {
    absl::Status status = registry.Register(kAlice, "r", key, 0, 4);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << key;
  }
  EXPECT_EQ(registry.Register(kAlice, "r", "/inferd_no_such_object", 0, 4).code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(registry.Status(kAlice).empty());
}

TEST(SharedMemoryRegistryTest, RefusesWhatIsNotARegularFileInDevShm) {
  const std::string fifo = "/dev/shm/inferd_test_fifo_" + std::to_string(getpid());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string link = "/dev/shm/inferd_test_link_" + std::to_string(getpid());
  ASSERT_EQ(symlink("/etc/hostname", link.c_str()), 0);
  SharedMemoryRegistry registry;

  EXPECT_EQ(registry.Register(kAlice, "f", fifo.substr(8), 0, 1).code(),
            absl::StatusCode::kInvalidArgument);
  // A symbolic link is not followed out of /dev/shm.
  EXPECT_FALSE(registry.Register(kAlice, "l", link.substr(8), 0, 1).ok());
  EXPECT_TRUE(registry.Status(kAlice).empty());
  unlink(fifo.c_str());
  unlink(link.c_str());
}

TEST(SharedMemoryRegistryTest, NamesAreUniqueBoundedAndCounted) {
  ShmObject object(16);
  SharedMemoryRegistry registry(SharedMemoryLimits{.max_regions = 2});
  ASSERT_TRUE(registry.Register(kAlice, "a", object.key(), 0, 8).ok());
  EXPECT_EQ(registry.Register(kAlice, "a", object.key(), 8, 8).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(registry.Register(kAlice, "", object.key(), 0, 8).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register(kAlice, "x/y", object.key(), 0, 8).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register(kAlice, std::string(200, 'n'), object.key(), 0, 8).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(registry.Register(kAlice, "b", object.key(), 8, 8).ok());
  EXPECT_EQ(registry.Register(kAlice, "c", object.key(), 0, 8).code(),
            absl::StatusCode::kResourceExhausted);

  std::vector<SharedMemoryRegionInfo> status = registry.Status(kAlice);
  ASSERT_EQ(status.size(), 2u);
  EXPECT_EQ(status[1].name, "b");
  EXPECT_EQ(status[1].key, object.key());
  EXPECT_EQ(status[1].offset, 8u);
  EXPECT_EQ(status[1].byte_size, 8u);
  EXPECT_EQ(registry.Status(kAlice, "nope").status().code(), absl::StatusCode::kNotFound);

  registry.Unregister(kAlice, "nope");  // not an error
  registry.Unregister(kAlice, "a");
  EXPECT_EQ(registry.Status(kAlice).size(), 1u);
  registry.UnregisterAll(kAlice);
  EXPECT_TRUE(registry.Status(kAlice).empty());
}

TEST(SharedMemoryRegistryTest, ASliceOutlivesItsRegionsUnregistration) {
  ShmObject object(16);
  object.WriteValues<float>(0, {4.0f, 5.0f});
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register(kAlice, "r", object.key(), 0, 16).ok());
  absl::StatusOr<SharedMemorySlice> slice = registry.Slice(kAlice, {"r", 0, 8}, "input 'x'");
  ASSERT_TRUE(slice.ok());
  registry.UnregisterAll(kAlice);

  absl::StatusOr<Tensor> tensor = registry.ReadTensor(*slice, DataType::kFp32, {2}, "input 'x'");
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_THAT(FloatsOf(*tensor), ElementsAre(4.0f, 5.0f));
}

TEST(SharedMemoryRegistryTest, AnInputLargerThanTheTensorLimitIsRefusedBeforeAllocating) {
  ShmObject object(1 << 16);
  SharedMemoryRegistry registry(SharedMemoryLimits{.max_tensor_bytes = 1024});
  ASSERT_TRUE(registry.Register(kAlice, "r", object.key(), 0, 1 << 16).ok());
  absl::StatusOr<Tensor> tensor = registry.ReadTensor(
      *registry.Slice(kAlice, {"r", 0, 4096}, "input 'x'"), DataType::kFp32, {1024}, "input 'x'");
  EXPECT_EQ(tensor.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tensor.status().message(), HasSubstr("over the server's limit of 1024 bytes"));
}

// Issue 30: regions had no owner, so any caller could read, write, list and unregister
// every other caller's regions.
TEST(SharedMemoryRegistryTest, AnotherOwnersRegionIsAsUnknownAsOneNobodyRegistered) {
  ShmObject mine(16);
  mine.WriteValues<float>(0, {1.0f});
  ShmObject theirs(16);
  theirs.WriteValues<float>(0, {2.0f});
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register(kAlice, "io", mine.key(), 0, 16).ok());

  for (std::string_view other : {"bob", ""}) {  // another tenant; the callers without one
    EXPECT_TRUE(registry.Status(other).empty());
    absl::Status taken = registry.Status(other, "io").status();
    absl::Status unknown = registry.Status(other, "zz").status();
    EXPECT_EQ(taken.code(), absl::StatusCode::kNotFound);
    EXPECT_EQ(taken.code(), unknown.code());
    EXPECT_EQ(absl::StrReplaceAll(taken.message(), {{"'io'", "'R'"}}),
              absl::StrReplaceAll(unknown.message(), {{"'zz'", "'R'"}}));
    taken = registry.Slice(other, {"io", 0, 4}, "input 'x'").status();
    unknown = registry.Slice(other, {"zz", 0, 4}, "input 'x'").status();
    EXPECT_EQ(taken.code(), absl::StatusCode::kNotFound);
    EXPECT_EQ(absl::StrReplaceAll(taken.message(), {{"'io'", "'R'"}}),
              absl::StrReplaceAll(unknown.message(), {{"'zz'", "'R'"}}));
    registry.Unregister(other, "io");
    registry.UnregisterAll(other);
    ASSERT_EQ(registry.Status(kAlice).size(), 1u);
  }

  // Names are per owner: bob's "io" is his own region and leaves alice's as it was.
  ASSERT_TRUE(registry.Register("bob", "io", theirs.key(), 0, 16).ok());
  absl::StatusOr<SharedMemorySlice> slice = registry.Slice(kAlice, {"io", 0, 4}, "input 'x'");
  ASSERT_TRUE(slice.ok()) << slice.status();
  EXPECT_THAT(FloatsOf(*registry.ReadTensor(*slice, DataType::kFp32, {1}, "input 'x'")),
              ElementsAre(1.0f));
  slice = registry.Slice("bob", {"io", 0, 4}, "input 'x'");
  ASSERT_TRUE(slice.ok()) << slice.status();
  EXPECT_THAT(FloatsOf(*registry.ReadTensor(*slice, DataType::kFp32, {1}, "input 'x'")),
              ElementsAre(2.0f));
  EXPECT_EQ(registry.Status(kAlice, "io")->key, mine.key());
  EXPECT_EQ(registry.Status("bob", "io")->key, theirs.key());

  registry.UnregisterAll("bob");
  EXPECT_TRUE(registry.Status("bob").empty());
  EXPECT_EQ(registry.Status(kAlice).size(), 1u);
}

TEST(SharedMemoryRegistryTest, OneOwnerCannotTakeEveryRegionSlot) {
  ShmObject object(16);
  SharedMemoryRegistry registry(SharedMemoryLimits{.max_regions = 3, .max_regions_per_owner = 2});
  ASSERT_TRUE(registry.Register(kAlice, "a", object.key(), 0, 8).ok());
  ASSERT_TRUE(registry.Register(kAlice, "b", object.key(), 0, 8).ok());
  absl::Status refused = registry.Register(kAlice, "c", object.key(), 0, 8);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.message(), HasSubstr("you hold 2 shared-memory regions"));
  ASSERT_TRUE(registry.Register("bob", "a", object.key(), 0, 8).ok());
  refused = registry.Register("carol", "a", object.key(), 0, 8);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.message(), HasSubstr("the server holds 3"));
  // Unregistering gives the slots back.
  registry.UnregisterAll(kAlice);
  EXPECT_TRUE(registry.Register("carol", "a", object.key(), 0, 8).ok());
  EXPECT_TRUE(registry.Register(kAlice, "a", object.key(), 0, 8).ok());
}

}  // namespace
}  // namespace inferd
