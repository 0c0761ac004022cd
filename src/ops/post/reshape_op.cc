#include "ops/post/reshape_op.h"

#include "common/status_macros.h"
#include "common/strings.h"
#include "ops/post/post_op_base.h"

namespace inferd {
namespace {

class ReshapeOp : public PostOp {
 public:
  ReshapeOp(DataType type, Shape shape)
      : PostOp({TensorSpec{"x", type, {-1}}}, {TensorSpec{"y", type, shape}}),
        shape_(std::move(shape)) {}

  bool accepts_any_dims() const override { return true; }

  absl::StatusOr<std::vector<Tensor>> Run(std::span<const Tensor> inputs) const override {
    const Tensor& x = inputs[0];
    if (x.shape().empty() || x.shape()[0] <= 0) {
      return absl::InvalidArgumentError(
          StrCat("reshape: takes [batch, ...], got shape ", ShapeToString(x.shape())));
    }
    const int64_t rows = x.shape()[0];
    const int64_t per_row = x.element_count() / rows;
    Shape shape{rows};
    int64_t known = 1;
    for (int64_t dim : shape_) known *= dim == -1 ? 1 : dim;
    for (int64_t dim : shape_) {
      shape.push_back(dim == -1 ? (known > 0 ? per_row / known : 0) : dim);
    }
    int64_t total = 1;
    for (size_t i = 1; i < shape.size(); ++i) total *= shape[i];
    if (total != per_row) {
      return absl::InvalidArgumentError(StrCat("reshape: a row of shape ", ShapeToString(x.shape()),
                                               " has ", per_row, " elements, which do not fit ",
                                               ShapeToString(shape_)));
    }
    std::vector<Tensor> outputs;
    // A view: same bytes, same owner; nothing downstream writes into it.
    outputs.push_back(Tensor::Wrap(x.type(), std::move(shape), const_cast<std::byte*>(x.data()),
                                   x.byte_size(), x.owner()));
    return outputs;
  }

 private:
  const Shape shape_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<PipelineOp>> MakeReshapeOp(const OpLoadRequest& request) {
  FieldReader reader(request.field);
  ASSIGN_OR_RETURN(YAML::Node params, LoadOpParams(request, reader, {"shape", "datatype"}));
  if (!params["shape"]) return reader.Error("params.shape", "is required (for example [3, 8])");
  ASSIGN_OR_RETURN(Shape shape, ParseDims(reader, params["shape"], "params.shape"));
  if (std::count(shape.begin(), shape.end(), -1) > 1) {
    return reader.Error("params.shape", "may have at most one -1");
  }
  DataType type = DataType::kFp32;
  if (params["datatype"]) {
    ASSIGN_OR_RETURN(std::string name, reader.String(params["datatype"], "params.datatype"));
    std::optional<DataType> parsed = ParseDataType(name);
    if (!parsed || *parsed == DataType::kBytes) {
      return reader.Error("params.datatype",
                          StrCat("'", name, "' is not a fixed-size datatype (one of ",
                                 AllDataTypeNames(), " but BYTES)"));
    }
    type = *parsed;
  }
  return std::make_unique<ReshapeOp>(type, std::move(shape));
}

}  // namespace inferd
