// The system shared-memory regions clients registered, by owner and name, and the tensors
// requests pass through them: the protocol-neutral part of Triton's shared-memory extension,
// shared by the HTTP and gRPC frontends (which decode the "shared_memory_region",
// "shared_memory_offset" and "shared_memory_byte_size" parameters and call this).
//
// Every region has an owner (the frontends pass the caller's tenant, auth/tenant.h
// TenantOwner), and an owner sees only its own: a request's tensors, status, unregister and
// unregister-all reach the caller's regions and no others, and a name another owner uses
// answers exactly as a name nobody registered (no oracle). Names are per owner, so two
// tenants' clients that both call their region "io" never collide, and the refusal of a
// taken name says nothing about anybody else.
//
// Who may register is the frontends' access check (management, like loading a model: a
// region makes the server open a file on its host and write outputs into it). This class
// bounds what any caller can make it hold: the number of regions (in all, and of one owner,
// so one tenant cannot take every slot), and the size of one input tensor read out of a
// region (as large as one request body may be).
//
// Thread-safety: all methods are thread-safe. Ownership: a slice keeps its region open, so
// unregistering never pulls memory from under a request in flight.
#ifndef INFERD_SHM_SHARED_MEMORY_REGISTRY_H_
#define INFERD_SHM_SHARED_MEMORY_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "core/backend/infer_request.h"
#include "core/types/tensor.h"
#include "shm/shared_memory_region.h"

namespace inferd {

// What a request's tensor says about its shared memory, as the protocol sent it.
struct SharedMemoryParameters {
  std::string region;
  uint64_t offset = 0;
  uint64_t byte_size = 0;
};

// A checked window of a registered region that one tensor occupies.
struct SharedMemorySlice {
  std::shared_ptr<const SharedMemoryRegion> region;
  uint64_t offset = 0;  // within the region
  uint64_t byte_size = 0;
};

struct SharedMemoryLimits {
  size_t max_regions = 1024;  // each holds a descriptor open
  size_t max_regions_per_owner = 128;
  uint64_t max_tensor_bytes = uint64_t{64} << 20;
};

class SharedMemoryRegistry {
 public:
  static constexpr size_t kMaxNameLength = 128;

  explicit SharedMemoryRegistry(SharedMemoryLimits limits = {}) : limits_(limits) {}

  // Opens and registers a region of `owner` (SharedMemoryRegion::Open's errors).
  // AlreadyExists when the owner has a region of that name (unregister it first);
  // ResourceExhausted past max_regions or max_regions_per_owner; InvalidArgument for an empty
  // or overlong name or a zero byte_size.
  absl::Status Register(std::string_view owner, std::string_view name, std::string_view key,
                        uint64_t offset, uint64_t byte_size);
  // Forgets a region of `owner`; an unknown name is not an error (the extension's clients
  // unregister defensively). Requests already holding a slice of it finish with it.
  void Unregister(std::string_view owner, std::string_view name);
  // Forgets every region of `owner`.
  void UnregisterAll(std::string_view owner);

  // Every region of `owner`, by name; or one (NotFound when the owner has none of that name).
  std::vector<SharedMemoryRegionInfo> Status(std::string_view owner) const;
  absl::StatusOr<SharedMemoryRegionInfo> Status(std::string_view owner,
                                                std::string_view name) const;

  // The window `parameters` names, checked against the owner's region of that name: NotFound
  // when the owner has none, InvalidArgument when the window runs past the region's end.
  // `what` names the tensor in messages ("input 'x'").
  absl::StatusOr<SharedMemorySlice> Slice(std::string_view owner,
                                          const SharedMemoryParameters& parameters,
                                          std::string_view what) const;

  // An input tensor of `type` and `shape` read out of `slice`: its byte size must be what
  // the shape needs (for BYTES, valid length-prefixed elements filling it) and at most
  // max_tensor_bytes.
  absl::StatusOr<Tensor> ReadTensor(const SharedMemorySlice& slice, DataType type, Shape shape,
                                    std::string_view what) const;

 private:
  using Regions = std::map<std::string, std::shared_ptr<const SharedMemoryRegion>, std::less<>>;

  // The owner's region `name`, null when the owner has none of that name.
  std::shared_ptr<const SharedMemoryRegion> Find(std::string_view owner,
                                                 std::string_view name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Why one more region of `owner` is refused; OK when it is not.
  absl::Status CheckRoom(std::string_view owner) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const SharedMemoryLimits limits_;
  mutable Mutex mu_;
  // Owners without regions have no entry.
  std::map<std::string, Regions, std::less<>> owners_ ABSL_GUARDED_BY(mu_);
  size_t count_ ABSL_GUARDED_BY(mu_) = 0;  // regions of all owners
};

// One owner's view of a registry: what the tensors of one caller's request may name. The
// decoders get this, never the registry itself, so none of them can forget whose request it is.
// Thread-safety: as the registry's. Ownership: the registry outlives the scope.
class SharedMemoryScope {
 public:
  SharedMemoryScope(const SharedMemoryRegistry& registry, std::string owner)
      : registry_(registry), owner_(std::move(owner)) {}

  absl::StatusOr<SharedMemorySlice> Slice(const SharedMemoryParameters& parameters,
                                          std::string_view what) const {
    return registry_.Slice(owner_, parameters, what);
  }
  absl::StatusOr<Tensor> ReadTensor(const SharedMemorySlice& slice, DataType type, Shape shape,
                                    std::string_view what) const {
    return registry_.ReadTensor(slice, type, std::move(shape), what);
  }

 private:
  const SharedMemoryRegistry& registry_;
  const std::string owner_;
};

// The outputs a request asked to receive in shared memory, by output name.
class SharedMemoryOutputs {
 public:
  void Add(std::string output, SharedMemorySlice slice) {
    outputs_.emplace_back(std::move(output), std::move(slice));
  }
  bool empty() const { return outputs_.empty(); }
  // The slice for `output`, null when it goes back in the reply.
  const SharedMemorySlice* Find(std::string_view output) const;

  // Writes each of these outputs of `response` into its slice. InvalidArgument naming the
  // output when one is larger than its slice (nothing is written then).
  absl::Status WriteAll(const InferResponse& response) const;

 private:
  std::vector<std::pair<std::string, SharedMemorySlice>> outputs_;
};

}  // namespace inferd

#endif  // INFERD_SHM_SHARED_MEMORY_REGISTRY_H_
