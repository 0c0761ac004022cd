// Early-return helpers for absl::Status / absl::StatusOr, as in TF Serving and leveldb.
#ifndef INFERD_COMMON_STATUS_MACROS_H_
#define INFERD_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define INFERD_CONCAT_INNER(a, b) a##b
#define INFERD_CONCAT(a, b) INFERD_CONCAT_INNER(a, b)

// Returns the status from the enclosing function when `expr` is not OK.
#define RETURN_IF_ERROR(expr)                        \
  do {                                               \
    ::absl::Status inferd_status_ = (expr);          \
    if (!inferd_status_.ok()) return inferd_status_; \
  } while (0)

// ASSIGN_OR_RETURN(T v, StatusOrExpr): assigns the value or returns the error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  INFERD_ASSIGN_OR_RETURN_IMPL(INFERD_CONCAT(inferd_statusor_, __LINE__), lhs, expr)

#define INFERD_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr)  \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // INFERD_COMMON_STATUS_MACROS_H_
