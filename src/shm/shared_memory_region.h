// One system shared-memory region a client registered (Triton's shared-memory extension): a
// window [offset, offset + byte_size) of a POSIX shared-memory object that the client created
// (shm_open key), through which it passes input tensors to the server and receives outputs
// without sending their bytes over the socket.
//
// The object is read and written with pread/pwrite on the descriptor, not through a mapping:
// the client owns the object and may shrink it at any time, and an access past the end of a
// shrunk mapping is SIGBUS, which would kill the server. A short read or write is an error
// the request gets instead. The copy costs what a memcpy out of a mapping would.
//
// Thread-safety: immutable after Open; Read and Write may run concurrently (each is one
// positioned system call). Ownership: holds the descriptor until destroyed, so a region that
// is unregistered while a request uses it stays open until that request is done.
#ifndef INFERD_SHM_SHARED_MEMORY_REGION_H_
#define INFERD_SHM_SHARED_MEMORY_REGION_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace inferd {

// What the status endpoints show for one region.
struct SharedMemoryRegionInfo {
  std::string name;
  std::string key;
  uint64_t offset = 0;
  uint64_t byte_size = 0;
};

class SharedMemoryRegion {
 public:
  // The longest key: a POSIX shared-memory name is one file name (NAME_MAX) in /dev/shm.
  static constexpr size_t kMaxKeyLength = 255;

  // Opens `key` read-write. InvalidArgument for a key that is not one shared-memory name
  // ("/name" or "name", no other '/'), an object that is not a regular file (a FIFO, a
  // directory), or a window that runs past the object's current size; NotFound when no such
  // object exists; PermissionDenied when the server may not open it.
  static absl::StatusOr<std::unique_ptr<SharedMemoryRegion>> Open(std::string name, std::string key,
                                                                  uint64_t offset,
                                                                  uint64_t byte_size);
  ~SharedMemoryRegion();
  SharedMemoryRegion(const SharedMemoryRegion&) = delete;
  SharedMemoryRegion& operator=(const SharedMemoryRegion&) = delete;

  const SharedMemoryRegionInfo& info() const { return info_; }

  // Copies `into.size()` bytes from `offset` within the region (not within the object).
  // The caller has checked that they lie inside the region. FailedPrecondition when the
  // object has shrunk since it was registered.
  absl::Status Read(uint64_t offset, std::span<std::byte> into) const;
  // Copies `from` to `offset` within the region; the same checks and errors as Read.
  absl::Status Write(uint64_t offset, std::span<const std::byte> from) const;

 private:
  SharedMemoryRegion(SharedMemoryRegionInfo info, int fd) : info_(std::move(info)), fd_(fd) {}

  const SharedMemoryRegionInfo info_;
  const int fd_;
};

}  // namespace inferd

#endif  // INFERD_SHM_SHARED_MEMORY_REGION_H_
