#include "ops/post/top_k_op.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "common/strings.h"
#include "core/types/bytes_tensor.h"
#include "ops/post/labels_file.h"
#include "ops/post/post_op_base.h"

namespace inferd {
namespace {

std::vector<TensorSpec> OutputPorts(int64_t k, bool single) {
  std::vector<TensorSpec> ports(3);
  ports[0].name = single ? "index" : "indices";
  ports[0].datatype = DataType::kInt64;
  ports[1].name = single ? "score" : "scores";
  ports[1].datatype = DataType::kFp32;
  ports[2].name = single ? "label" : "labels";
  ports[2].datatype = DataType::kBytes;
  for (TensorSpec& port : ports) port.dims = {k};
  return ports;
}

std::vector<TensorSpec> InputPorts(size_t labels) {
  std::vector<TensorSpec> ports(1);
  ports[0].name = "x";
  ports[0].datatype = DataType::kFp32;
  ports[0].dims = {labels == 0 ? -1 : static_cast<int64_t>(labels)};
  return ports;
}

class TopKOp : public PostOp {
 public:
  TopKOp(int64_t k, std::vector<std::string> labels, bool single)
      : PostOp(InputPorts(labels.size()), OutputPorts(k, single)),
        k_(k),
        labels_(std::move(labels)) {
    for (const std::string& label : labels_) label_bytes_ += label.size();
  }

  uint64_t memory_bytes() const override { return label_bytes_; }

  absl::StatusOr<std::vector<Tensor>> Run(std::span<const Tensor> inputs) const override {
    const Tensor& x = inputs[0];
    ASSIGN_OR_RETURN(const int64_t classes, LastAxisOf(x, "top_k"));
    if (!labels_.empty() && classes != static_cast<int64_t>(labels_.size())) {
      return absl::InvalidArgumentError(StrCat(
          "top_k: x has ", classes, " classes per row, the labels file has ", labels_.size()));
    }
    if (classes < k_) {
      return absl::InvalidArgumentError(
          StrCat("top_k: x has ", classes, " classes per row, fewer than k = ", k_));
    }
    Shape shape(x.shape().begin(), x.shape().end() - 1);
    const int64_t rows = x.element_count() / classes;
    shape.push_back(k_);
    ASSIGN_OR_RETURN(Tensor indices, Tensor::AllocateForOverwrite(DataType::kInt64, shape));
    ASSIGN_OR_RETURN(Tensor scores, Tensor::AllocateForOverwrite(DataType::kFp32, shape));
    std::vector<std::string> index_text;  // labels when there is no labels file
    std::vector<std::string_view> names;
    names.reserve(rows * k_);
    index_text.reserve(labels_.empty() ? rows * k_ : 0);
    std::vector<int64_t> order(classes);
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = x.data_as<float>() + r * classes;
      std::iota(order.begin(), order.end(), 0);
      auto better = [row](int64_t a, int64_t b) {
        const float sa = std::isnan(row[a]) ? -INFINITY : row[a];
        const float sb = std::isnan(row[b]) ? -INFINITY : row[b];
        if (sa != sb) return sa > sb;
        if (std::isnan(row[a]) != std::isnan(row[b])) return !std::isnan(row[a]);
        return a < b;
      };
      std::partial_sort(order.begin(), order.begin() + k_, order.end(), better);
      for (int64_t j = 0; j < k_; ++j) {
        const int64_t c = order[j];
        indices.mutable_data_as<int64_t>()[r * k_ + j] = c;
        scores.mutable_data_as<float>()[r * k_ + j] = row[c];
        if (labels_.empty()) {
          index_text.push_back(std::to_string(c));
        } else {
          names.push_back(labels_[c]);
        }
      }
    }
    if (labels_.empty()) {
      for (const std::string& text : index_text) names.push_back(text);
    }
    ASSIGN_OR_RETURN(Tensor label_tensor, MakeBytesTensor(shape, names));
    std::vector<Tensor> outputs;
    outputs.push_back(std::move(indices));
    outputs.push_back(std::move(scores));
    outputs.push_back(std::move(label_tensor));
    return outputs;
  }

 private:
  const int64_t k_;
  const std::vector<std::string> labels_;
  uint64_t label_bytes_ = 0;
};

absl::StatusOr<std::unique_ptr<PipelineOp>> Make(const OpLoadRequest& request, bool single) {
  FieldReader reader(request.field);
  ASSIGN_OR_RETURN(YAML::Node params, LoadOpParams(request, reader,
                                                   single ? std::set<std::string>{"labels"}
                                                          : std::set<std::string>{"k", "labels"}));
  int64_t k = 1;
  if (!single) {
    if (!params["k"]) return reader.Error("params.k", "is required (how many classes to return)");
    ASSIGN_OR_RETURN(k, reader.IntegerIn(params["k"], "params.k", 1, kMaxTopK));
  }
  std::vector<std::string> labels;
  if (params["labels"]) {
    ASSIGN_OR_RETURN(std::string file, reader.String(params["labels"], "params.labels"));
    ASSIGN_OR_RETURN(labels, ReadLabelsFile(reader, "params.labels", request.version_dir, file));
    if (static_cast<int64_t>(labels.size()) < k) {
      return reader.Error("params.labels",
                          StrCat("has ", labels.size(), " labels, fewer than k = ", k));
    }
  }
  return std::make_unique<TopKOp>(k, std::move(labels), single);
}

}  // namespace

absl::StatusOr<std::unique_ptr<PipelineOp>> MakeTopKOp(const OpLoadRequest& request) {
  return Make(request, /*single=*/false);
}

absl::StatusOr<std::unique_ptr<PipelineOp>> MakeArgmaxOp(const OpLoadRequest& request) {
  return Make(request, /*single=*/true);
}

}  // namespace inferd
