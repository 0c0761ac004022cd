// Mapping between inferd datatypes and LibTorch scalar types.
#ifndef INFERD_BACKENDS_TORCH_TORCH_DTYPE_H_
#define INFERD_BACKENDS_TORCH_TORCH_DTYPE_H_

#include <optional>

#include <c10/core/ScalarType.h>

#include "core/types/data_type.h"

namespace inferd {

c10::ScalarType ToTorchType(DataType type);

// nullopt for LibTorch types with no protocol equivalent (complex, quantized, float8).
std::optional<DataType> FromTorchType(c10::ScalarType type);

}  // namespace inferd

#endif  // INFERD_BACKENDS_TORCH_TORCH_DTYPE_H_
