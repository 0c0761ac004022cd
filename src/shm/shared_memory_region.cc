#include "shm/shared_memory_region.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "common/strings.h"

namespace inferd {
namespace {

// "/name" or "name": one file name. shm_open would refuse most bad keys itself; checking
// first gives the client a message that says what is wrong instead of an errno.
absl::Status CheckKey(std::string_view key) {
  std::string_view name = key;
  if (name.starts_with('/')) name.remove_prefix(1);
  if (name.empty() || name.size() > SharedMemoryRegion::kMaxKeyLength ||
      name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos ||
      name == "." || name == "..") {
    return absl::InvalidArgumentError(
        StrCat("shared-memory key '", EscapeForLog(key, 64),
               "' is not a POSIX shared-memory name: '/name' with at most ",
               SharedMemoryRegion::kMaxKeyLength, " characters and no other '/'"));
  }
  return absl::OkStatus();
}

absl::Status OpenError(int error, std::string_view key) {
  const std::string what = StrCat("shared-memory object '", EscapeForLog(key, 64), "'");
  if (error == ENOENT) {
    return absl::NotFoundError(
        StrCat(what, " does not exist: create it (shm_open) before registering it"));
  }
  if (error == EACCES || error == EPERM) {
    return absl::PermissionDeniedError(
        StrCat(what, ": the server may not open it for reading and writing"));
  }
  return absl::InvalidArgumentError(StrCat(what, " cannot be opened: ", std::strerror(error)));
}

absl::Status Shrunk(const SharedMemoryRegionInfo& info) {
  return absl::FailedPreconditionError(
      StrCat("shared-memory region '", info.name, "': its object '", info.key,
             "' has shrunk below the registered window since it was registered; register it "
             "again"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SharedMemoryRegion>> SharedMemoryRegion::Open(std::string name,
                                                                             std::string key,
                                                                             uint64_t offset,
                                                                             uint64_t byte_size) {
  if (absl::Status valid = CheckKey(key); !valid.ok()) return valid;
  // glibc's shm_open adds O_NOFOLLOW and O_CLOEXEC: a symbolic link planted in /dev/shm does
  // not lead outside it.
  const int fd = shm_open(key.c_str(), O_RDWR, 0);
  if (fd < 0) return OpenError(errno, key);
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(
        StrCat("shared-memory object '", EscapeForLog(key, 64), "' is not a regular file"));
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (offset > size || byte_size > size - offset) {
    close(fd);
    return absl::InvalidArgumentError(StrCat(
        "shared-memory region '", EscapeForLog(name, 64), "': offset ", offset, " + byte_size ",
        byte_size, " runs past the end of object '", key, "' (", size, " bytes)"));
  }
  SharedMemoryRegionInfo info{std::move(name), std::move(key), offset, byte_size};
  return std::unique_ptr<SharedMemoryRegion>(new SharedMemoryRegion(std::move(info), fd));
}

SharedMemoryRegion::~SharedMemoryRegion() { close(fd_); }

absl::Status SharedMemoryRegion::Read(uint64_t offset, std::span<std::byte> into) const {
  uint64_t position = info_.offset + offset;
  while (!into.empty()) {
    const ssize_t n = pread(fd_, into.data(), into.size(), static_cast<off_t>(position));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::InternalError(
          StrCat("reading shared-memory region '", info_.name, "' failed: ", std::strerror(errno)));
    }
    if (n == 0) return Shrunk(info_);
    into = into.subspan(static_cast<size_t>(n));
    position += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

absl::Status SharedMemoryRegion::Write(uint64_t offset, std::span<const std::byte> from) const {
  // pwrite past the end would grow the object instead of failing: check its size first.
  struct stat st {};
  if (fstat(fd_, &st) != 0 ||
      static_cast<uint64_t>(st.st_size) < info_.offset + offset + from.size()) {
    return Shrunk(info_);
  }
  uint64_t position = info_.offset + offset;
  while (!from.empty()) {
    const ssize_t n = pwrite(fd_, from.data(), from.size(), static_cast<off_t>(position));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::InternalError(
          StrCat("writing shared-memory region '", info_.name, "' failed: ", std::strerror(errno)));
    }
    from = from.subspan(static_cast<size_t>(n));
    position += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace inferd
