#include "shm/shared_memory_registry.h"

#include <algorithm>

#include "common/status_macros.h"
#include "common/strings.h"
#include "core/types/bytes_tensor.h"

namespace inferd {
namespace {

// Names travel in URL paths and JSON and show up in logs: printable ASCII without '/'.
bool IsValidName(std::string_view name) {
  if (name.empty() || name.size() > SharedMemoryRegistry::kMaxNameLength) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return c > ' ' && c < 0x7f && c != '/'; });
}

absl::Status AlreadyRegistered(std::string_view name) {
  return absl::AlreadyExistsError(
      StrCat("shared-memory region '", name, "' is already registered: unregister it first"));
}

std::span<std::byte> BytesOf(void* data, size_t size) {
  return {static_cast<std::byte*>(data), size};
}

}  // namespace

absl::Status SharedMemoryRegistry::Register(std::string_view owner, std::string_view name,
                                            std::string_view key, uint64_t offset,
                                            uint64_t byte_size) {
  if (!IsValidName(name)) {
    return absl::InvalidArgumentError(StrCat("shared-memory region name '", EscapeForLog(name, 64),
                                             "' must be 1 to ", kMaxNameLength,
                                             " printable ASCII characters without '/'"));
  }
  if (byte_size == 0) {
    return absl::InvalidArgumentError(
        StrCat("shared-memory region '", name, "': byte_size must be greater than 0"));
  }
  {
    MutexLock lock(&mu_);
    if (Find(owner, name) != nullptr) return AlreadyRegistered(name);
    RETURN_IF_ERROR(CheckRoom(owner));
  }
  // Opening touches the file system: outside the lock, so a slow open never stalls the
  // requests that look regions up.
  ASSIGN_OR_RETURN(
      std::unique_ptr<SharedMemoryRegion> region,
      SharedMemoryRegion::Open(std::string(name), std::string(key), offset, byte_size));
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckRoom(owner));  // another registration may have come in meanwhile
  auto owned = owners_.find(owner);
  if (owned == owners_.end()) owned = owners_.emplace(std::string(owner), Regions()).first;
  auto [it, inserted] = owned->second.emplace(std::string(name), std::move(region));
  if (!inserted) return AlreadyRegistered(name);
  ++count_;
  return absl::OkStatus();
}

std::shared_ptr<const SharedMemoryRegion> SharedMemoryRegistry::Find(std::string_view owner,
                                                                     std::string_view name) const {
  auto owned = owners_.find(owner);
  if (owned == owners_.end()) return nullptr;
  auto it = owned->second.find(name);
  return it == owned->second.end() ? nullptr : it->second;
}

absl::Status SharedMemoryRegistry::CheckRoom(std::string_view owner) const {
  if (auto owned = owners_.find(owner);
      owned != owners_.end() && owned->second.size() >= limits_.max_regions_per_owner) {
    return absl::ResourceExhaustedError(StrCat("you hold ", limits_.max_regions_per_owner,
                                               " shared-memory regions, the most one tenant may: "
                                               "unregister some first"));
  }
  // Says that others hold regions, not whose or which: the price of a server-wide bound on
  // open descriptors.
  if (count_ >= limits_.max_regions) {
    return absl::ResourceExhaustedError(StrCat("the server holds ", limits_.max_regions,
                                               " shared-memory regions, its limit; try later"));
  }
  return absl::OkStatus();
}

void SharedMemoryRegistry::Unregister(std::string_view owner, std::string_view name) {
  std::shared_ptr<const SharedMemoryRegion> dropped;  // closed outside the lock
  MutexLock lock(&mu_);
  auto owned = owners_.find(owner);
  if (owned == owners_.end()) return;
  if (auto it = owned->second.find(name); it != owned->second.end()) {
    dropped = std::move(it->second);
    owned->second.erase(it);
    --count_;
  }
  if (owned->second.empty()) owners_.erase(owned);
}

void SharedMemoryRegistry::UnregisterAll(std::string_view owner) {
  Regions dropped;  // closed outside the lock
  MutexLock lock(&mu_);
  auto owned = owners_.find(owner);
  if (owned == owners_.end()) return;
  dropped.swap(owned->second);
  count_ -= dropped.size();
  owners_.erase(owned);
}

std::vector<SharedMemoryRegionInfo> SharedMemoryRegistry::Status(std::string_view owner) const {
  std::vector<SharedMemoryRegionInfo> infos;
  MutexLock lock(&mu_);
  auto owned = owners_.find(owner);
  if (owned == owners_.end()) return infos;
  infos.reserve(owned->second.size());
  for (const auto& [name, region] : owned->second) infos.push_back(region->info());
  return infos;
}

absl::StatusOr<SharedMemoryRegionInfo> SharedMemoryRegistry::Status(std::string_view owner,
                                                                    std::string_view name) const {
  MutexLock lock(&mu_);
  std::shared_ptr<const SharedMemoryRegion> region = Find(owner, name);
  if (region == nullptr) {
    return absl::NotFoundError(
        StrCat("no shared-memory region named '", EscapeForLog(name, 64), "' is registered"));
  }
  return region->info();
}

absl::StatusOr<SharedMemorySlice> SharedMemoryRegistry::Slice(
    std::string_view owner, const SharedMemoryParameters& parameters, std::string_view what) const {
  std::shared_ptr<const SharedMemoryRegion> region;
  {
    MutexLock lock(&mu_);
    region = Find(owner, parameters.region);
  }
  // Another owner's region of this name is not looked at: the caller gets what a name nobody
  // registered gets.
  if (region == nullptr) {
    return absl::NotFoundError(StrCat(what, ": shared-memory region '",
                                      EscapeForLog(parameters.region, 64),
                                      "' is not registered (register it first)"));
  }
  const uint64_t size = region->info().byte_size;
  if (parameters.offset > size || parameters.byte_size > size - parameters.offset) {
    return absl::InvalidArgumentError(StrCat(what, ": shared_memory_offset ", parameters.offset,
                                             " + shared_memory_byte_size ", parameters.byte_size,
                                             " runs past the end of region '", parameters.region,
                                             "' (", size, " bytes)"));
  }
  return SharedMemorySlice{std::move(region), parameters.offset, parameters.byte_size};
}

absl::StatusOr<Tensor> SharedMemoryRegistry::ReadTensor(const SharedMemorySlice& slice,
                                                        DataType type, Shape shape,
                                                        std::string_view what) const {
  if (slice.byte_size > limits_.max_tensor_bytes) {
    return absl::InvalidArgumentError(StrCat(what, ": shared_memory_byte_size ", slice.byte_size,
                                             " is over the server's limit of ",
                                             limits_.max_tensor_bytes, " bytes for one tensor"));
  }
  ASSIGN_OR_RETURN(int64_t count, ElementCount(shape));
  const auto size = static_cast<size_t>(slice.byte_size);
  if (type == DataType::kBytes) {
    ASSIGN_OR_RETURN(Tensor tensor, Tensor::AllocateForOverwrite(type, std::move(shape), size));
    std::span<std::byte> bytes = BytesOf(tensor.mutable_data(), size);
    RETURN_IF_ERROR(slice.region->Read(slice.offset, bytes));
    RETURN_IF_ERROR(ValidateBytesBuffer(bytes, count, what));
    return tensor;
  }
  const size_t element_size = DataTypeSize(type);
  if (static_cast<uint64_t>(count) > slice.byte_size / element_size ||
      static_cast<uint64_t>(count) * element_size != slice.byte_size) {
    return absl::InvalidArgumentError(
        StrCat(what, ": shape ", ShapeToString(shape), " of ", DataTypeName(type), " needs ", count,
               " x ", element_size, " bytes, but shared_memory_byte_size is ", slice.byte_size));
  }
  ASSIGN_OR_RETURN(Tensor tensor, Tensor::AllocateForOverwrite(type, std::move(shape)));
  RETURN_IF_ERROR(slice.region->Read(slice.offset, BytesOf(tensor.mutable_data(), size)));
  return tensor;
}

const SharedMemorySlice* SharedMemoryOutputs::Find(std::string_view output) const {
  for (const auto& [name, slice] : outputs_) {
    if (name == output) return &slice;
  }
  return nullptr;
}

absl::Status SharedMemoryOutputs::WriteAll(const InferResponse& response) const {
  for (const NamedTensor& output : response.outputs) {
    const SharedMemorySlice* slice = Find(output.name);
    if (slice != nullptr && output.tensor.byte_size() > slice->byte_size) {
      return absl::InvalidArgumentError(
          StrCat("output '", output.name, "' has ", output.tensor.byte_size(),
                 " bytes, more than its shared_memory_byte_size of ", slice->byte_size));
    }
  }
  for (const NamedTensor& output : response.outputs) {
    const SharedMemorySlice* slice = Find(output.name);
    if (slice == nullptr) continue;
    const std::span<const std::byte> bytes(static_cast<const std::byte*>(output.tensor.data()),
                                           output.tensor.byte_size());
    RETURN_IF_ERROR(slice->region->Write(slice->offset, bytes));
  }
  return absl::OkStatus();
}

}  // namespace inferd
