#include "ops/image/image_to_tensor_op.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/float16.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "core/config/config_field_reader.h"
#include "core/pipeline/op_params.h"
#include "core/types/bytes_tensor.h"
#include "ops/image/image_decoder.h"
#include "ops/image/pil_resample.h"
#include "ops/image/pixel_ops.h"

namespace inferd {
namespace {

struct Params {
  ImageColor color = ImageColor::kRgb;
  bool apply_exif = false;
  std::optional<int> shorter_side;
  std::optional<std::pair<int, int>> resize_to;  // (height, width)
  std::optional<std::pair<int, int>> crop;       // (height, width)
  float divisor = 255.0f;
  std::vector<float> mean, std;
  bool nchw = true;
  DataType datatype = DataType::kFp32;
  ImageLimits limits;
  int channels() const { return color == ImageColor::kRgb ? 3 : 1; }
};

absl::StatusOr<std::pair<int, int>> ReadPair(const FieldReader& r, const YAML::Node& node,
                                             const std::string& field) {
  if (!node.IsSequence() || node.size() != 2) return r.Error(field, "must be [height, width]");
  ASSIGN_OR_RETURN(int64_t h, r.IntegerIn(node[0], field + "[0]", 1, 16384));
  ASSIGN_OR_RETURN(int64_t w, r.IntegerIn(node[1], field + "[1]", 1, 16384));
  return std::pair<int, int>(static_cast<int>(h), static_cast<int>(w));
}

absl::StatusOr<std::vector<float>> ReadFloats(const FieldReader& r, const YAML::Node& node,
                                              const std::string& field, size_t count) {
  if (!node.IsSequence() || node.size() != count) {
    return r.Error(field, StrCat("must be a list of ", count, " numbers (one per channel)"));
  }
  std::vector<float> values;
  for (size_t i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(double v, r.Number(node[i], StrCat(field, "[", i, "]")));
    values.push_back(static_cast<float>(v));
  }
  return values;
}

absl::StatusOr<Params> ParseParams(const OpLoadRequest& request) {
  const FieldReader r(request.field);
  Params p;
  ASSIGN_OR_RETURN(
      const YAML::Node node,
      LoadOpParams(request, r,
                   {"color", "exif_orientation", "resize", "center_crop", "divisor", "mean", "std",
                    "layout", "datatype", "max_bytes", "max_pixels", "max_side"}));
  if (node["color"]) {
    ASSIGN_OR_RETURN(std::string color, r.String(node["color"], "params.color"));
    if (color != "rgb" && color != "gray") return r.Error("params.color", "must be rgb or gray");
    p.color = color == "rgb" ? ImageColor::kRgb : ImageColor::kGray;
  }
  if (node["exif_orientation"]) {
    ASSIGN_OR_RETURN(std::string exif,
                     r.String(node["exif_orientation"], "params.exif_orientation"));
    if (exif != "apply" && exif != "ignore") {
      return r.Error("params.exif_orientation", "must be apply or ignore");
    }
    p.apply_exif = exif == "apply";
  }
  if (const YAML::Node resize = node["resize"]) {
    RETURN_IF_ERROR(r.CheckKeys(resize, "params.resize", {"shorter_side", "size"}));
    if (static_cast<bool>(resize["shorter_side"]) == static_cast<bool>(resize["size"])) {
      return r.Error("params.resize", "takes exactly one of shorter_side or size");
    }
    if (resize["shorter_side"]) {
      ASSIGN_OR_RETURN(int64_t side,
                       r.IntegerIn(resize["shorter_side"], "params.resize.shorter_side", 1, 16384));
      p.shorter_side = static_cast<int>(side);
    } else {
      ASSIGN_OR_RETURN(p.resize_to, ReadPair(r, resize["size"], "params.resize.size"));
    }
  }
  if (node["center_crop"]) {
    ASSIGN_OR_RETURN(p.crop, ReadPair(r, node["center_crop"], "params.center_crop"));
  }
  if (node["datatype"]) {
    ASSIGN_OR_RETURN(std::string type, r.String(node["datatype"], "params.datatype"));
    if (type == "FP32") {
      p.datatype = DataType::kFp32;
    } else if (type == "FP16") {
      p.datatype = DataType::kFp16;
    } else if (type == "UINT8") {
      p.datatype = DataType::kUint8;
    } else {
      return r.Error("params.datatype", "must be FP32, FP16 or UINT8");
    }
  }
  const bool scaled = node["divisor"] || node["mean"] || node["std"];
  if (p.datatype == DataType::kUint8 && scaled) {
    return r.Error("params.datatype", "UINT8 keeps the pixel values: leave out divisor, mean, std");
  }
  if (node["divisor"]) {
    ASSIGN_OR_RETURN(double divisor, r.Number(node["divisor"], "params.divisor"));
    if (!(divisor > 0)) return r.Error("params.divisor", "must be a positive number");
    p.divisor = static_cast<float>(divisor);
  }
  if (static_cast<bool>(node["mean"]) != static_cast<bool>(node["std"])) {
    return r.Error(node["mean"] ? "params.std" : "params.mean",
                   "mean and std go together (Normalize takes both)");
  }
  if (node["mean"]) {
    const size_t channels = static_cast<size_t>(p.channels());
    ASSIGN_OR_RETURN(p.mean, ReadFloats(r, node["mean"], "params.mean", channels));
    ASSIGN_OR_RETURN(p.std, ReadFloats(r, node["std"], "params.std", channels));
    for (size_t i = 0; i < channels; ++i) {
      if (!(p.std[i] > 0)) return r.Error(StrCat("params.std[", i, "]"), "must be positive");
    }
  }
  if (node["layout"]) {
    ASSIGN_OR_RETURN(std::string layout, r.String(node["layout"], "params.layout"));
    if (layout != "NCHW" && layout != "NHWC") {
      return r.Error("params.layout", "must be NCHW or NHWC");
    }
    p.nchw = layout == "NCHW";
  }
  if (node["max_bytes"]) {
    ASSIGN_OR_RETURN(int64_t v,
                     r.IntegerIn(node["max_bytes"], "params.max_bytes", 1, int64_t{1} << 30));
    p.limits.max_bytes = static_cast<uint64_t>(v);
  }
  if (node["max_pixels"]) {
    ASSIGN_OR_RETURN(int64_t v,
                     r.IntegerIn(node["max_pixels"], "params.max_pixels", 1, int64_t{1} << 28));
    p.limits.max_pixels = static_cast<uint64_t>(v);
  }
  if (node["max_side"]) {
    ASSIGN_OR_RETURN(int64_t v, r.IntegerIn(node["max_side"], "params.max_side", 1, 65535));
    p.limits.max_side = static_cast<uint32_t>(v);
  }
  return p;
}

// torchvision's Resize(int) on a PIL image: the shorter side becomes `side`, the longer
// int(side * long / short) (truncated, as Python's int() does).
std::pair<int, int> ShorterSideSize(int height, int width, int side) {
  const bool portrait = width <= height;
  const int shorter = portrait ? width : height;
  const int longer = portrait ? height : width;
  const int new_longer = static_cast<int>(static_cast<double>(int64_t{side} * longer) / shorter);
  return portrait ? std::pair(new_longer, side) : std::pair(side, new_longer);
}

class ImageToTensorOp : public PipelineOp {
 public:
  explicit ImageToTensorOp(Params params) : params_(std::move(params)) {
    inputs_ = {TensorSpec{"image", DataType::kBytes, {}}};
    int64_t h = -1, w = -1;
    if (params_.crop) {
      h = params_.crop->first;
      w = params_.crop->second;
    } else if (params_.resize_to) {
      h = params_.resize_to->first;
      w = params_.resize_to->second;
    }
    const int64_t c = params_.channels();
    outputs_ = {
        TensorSpec{"tensor", params_.datatype, params_.nchw ? Shape{c, h, w} : Shape{h, w, c}}};
  }

  const std::vector<TensorSpec>& inputs() const override { return inputs_; }
  const std::vector<TensorSpec>& outputs() const override { return outputs_; }
  bool heavy() const override { return true; }

  absl::StatusOr<std::vector<Tensor>> Run(std::span<const Tensor> inputs) const override {
    const std::vector<std::string_view> files = BytesElements(inputs[0]);
    Tensor out;
    size_t row_elements = 0;
    int out_h = 0, out_w = 0;
    for (size_t row = 0; row < files.size(); ++row) {
      absl::StatusOr<DecodedImage> image = Prepare(files[row]);
      if (!image.ok()) {
        return absl::Status(image.status().code(),
                            StrCat("element ", row, ": ", image.status().message()));
      }
      if (row == 0) {
        out_h = image->height;
        out_w = image->width;
        const int64_t c = params_.channels();
        Shape shape = params_.nchw ? Shape{static_cast<int64_t>(files.size()), c, out_h, out_w}
                                   : Shape{static_cast<int64_t>(files.size()), out_h, out_w, c};
        ASSIGN_OR_RETURN(out, Tensor::AllocateForOverwrite(params_.datatype, std::move(shape)));
        row_elements = static_cast<size_t>(c) * out_h * out_w;
      } else if (image->height != out_h || image->width != out_w) {
        return absl::InvalidArgumentError(
            StrCat("element ", row, ": ", image->width, "x", image->height,
                   " pixels, but element 0 has ", out_w, "x", out_h,
                   "; images batched together must have one size (or give the pipeline a "
                   "resize.size or center_crop)"));
      }
      Write(*image, out, row * row_elements);
    }
    return std::vector<Tensor>{std::move(out)};
  }

 private:
  // Decoded, oriented, resized and cropped pixels of one file.
  absl::StatusOr<DecodedImage> Prepare(std::string_view file) const {
    const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(file.data()),
                                         file.size());
    ImageLimitNames names;
    ASSIGN_OR_RETURN(DecodedImage image, DecodeImage(bytes, params_.color, params_.limits, names));
    if (params_.apply_exif) image = Orient(image, ExifOrientationOf(bytes));
    std::optional<std::pair<int, int>> size = params_.resize_to;
    if (params_.shorter_side) {
      size = ShorterSideSize(image.height, image.width, *params_.shorter_side);
    }
    if (size && (size->first != image.height || size->second != image.width)) {
      // The resized image is allocated too: bounded like a decoded one (a 100000 x 1 image
      // with shorter_side 256 would be 25.6 million x 256).
      const uint64_t pixels = static_cast<uint64_t>(size->first) * size->second;
      if (pixels > params_.limits.max_pixels) {
        return absl::InvalidArgumentError(StrCat(
            "resizing ", image.width, "x", image.height, " to ", size->second, "x", size->first,
            " would make ", pixels, " pixels; this pipeline takes at most ",
            params_.limits.max_pixels, " (params.max_pixels): send an image closer to square"));
      }
      image = PilBilinearResize(image, size->second, size->first);
    }
    if (params_.crop) image = CenterCrop(image, params_.crop->first, params_.crop->second);
    return image;
  }

  // ToTensor and Normalize in float32, in torchvision's order: x / divisor, then
  // (x - mean) / std (this file is compiled without floating-point contraction).
  void Write(const DecodedImage& image, Tensor& out, size_t offset) const {
    const int c = image.channels, h = image.height, w = image.width;
    auto index = [&](int ch, int y, int x) -> size_t {
      return offset + (params_.nchw ? (static_cast<size_t>(ch) * h + y) * w + x
                                    : (static_cast<size_t>(y) * w + x) * c + ch);
    };
    const bool normalize = !params_.mean.empty();
    for (int y = 0; y < h; ++y) {
      const uint8_t* row = image.row(y);
      for (int x = 0; x < w; ++x) {
        for (int ch = 0; ch < c; ++ch) {
          const uint8_t pixel = row[x * c + ch];
          const size_t at = index(ch, y, x);
          if (params_.datatype == DataType::kUint8) {
            out.mutable_data_as<uint8_t>()[at] = pixel;
            continue;
          }
          float v = static_cast<float>(pixel) / params_.divisor;
          if (normalize) v = (v - params_.mean[ch]) / params_.std[ch];
          if (params_.datatype == DataType::kFp16) {
            out.mutable_data_as<uint16_t>()[at] = FloatToHalf(v);
          } else {
            out.mutable_data_as<float>()[at] = v;
          }
        }
      }
    }
  }

  const Params params_;
  std::vector<TensorSpec> inputs_, outputs_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<PipelineOp>> MakeImageToTensorOp(const OpLoadRequest& request) {
  ASSIGN_OR_RETURN(Params params, ParseParams(request));
  return std::make_unique<ImageToTensorOp>(std::move(params));
}

}  // namespace inferd
