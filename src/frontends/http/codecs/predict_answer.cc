#include "frontends/http/codecs/predict_answer.h"

#include <vector>

#include "core/config/pipeline_spec.h"
#include "core/types/bytes_tensor.h"
#include "frontends/http/codecs/json_tensor_codec.h"

namespace inferd {
namespace {

const Tensor* FindOutput(const InferResponse& response, const std::string& name) {
  for (const NamedTensor& output : response.outputs) {
    if (output.name == name) return &output.tensor;
  }
  return nullptr;
}

void WriteRow(const std::vector<std::string_view>& labels, const float* scores, size_t row,
              size_t k, JsonWriter& writer) {
  writer.StartObject();
  writer.Key("label");
  WriteString(writer, labels[row * k]);
  writer.Key("score");
  writer.Double(scores[row * k]);
  writer.Key("top_k");
  writer.StartArray();
  for (size_t i = 0; i < k; ++i) {
    writer.StartObject();
    writer.Key("label");
    WriteString(writer, labels[row * k + i]);
    writer.Key("score");
    writer.Double(scores[row * k + i]);
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
}

}  // namespace

std::optional<std::string> EncodeLabelAnswer(const ModelConfig& config,
                                             const InferResponse& response, bool single_instance) {
  if (config.pipeline == nullptr) return std::nullopt;
  const auto& answer = config.pipeline->answer;
  const auto labels_name = answer.find("labels");
  const auto scores_name = answer.find("scores");
  if (labels_name == answer.end() || scores_name == answer.end()) return std::nullopt;
  const Tensor* labels = FindOutput(response, labels_name->second);
  const Tensor* scores = FindOutput(response, scores_name->second);
  if (labels == nullptr || scores == nullptr || labels->type() != DataType::kBytes ||
      scores->type() != DataType::kFp32 || labels->shape().empty() ||
      labels->element_count() != scores->element_count() || labels->element_count() == 0) {
    return std::nullopt;
  }
  const size_t k = static_cast<size_t>(labels->shape().back());
  const size_t rows = static_cast<size_t>(labels->element_count()) / k;
  const std::vector<std::string_view> names = BytesElements(*labels);
  const float* values = scores->data_as<float>();
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  if (single_instance && rows == 1) {
    WriteRow(names, values, 0, k, writer);
  } else {
    writer.StartObject();
    writer.Key("output");
    writer.StartArray();
    for (size_t row = 0; row < rows; ++row) WriteRow(names, values, row, k, writer);
    writer.EndArray();
    writer.EndObject();
  }
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace inferd
