// `op: image_to_tensor`: image files (a BYTES input, one file per row) to the tensor a vision
// model takes, as torchvision's transforms make it from a PIL image:
//   Image.open(f).convert("RGB" | "L")          colour: rgb | gray
//   [ImageOps.exif_transpose]                   exif_orientation: apply (default: ignore,
//                                               as torchvision's own loader does)
//   Resize(shorter_side) or Resize((h, w))      resize: {shorter_side: 256} | {size: [h, w]}
//   CenterCrop((h, w))                          center_crop: [224, 224]
//   ToTensor() then Normalize(mean, std)        divisor (255), mean, std
// laid out NCHW or NHWC (layout) as FP32, FP16 or UINT8 (datatype; UINT8 keeps the pixel
// values: no divisor, mean or std). docs/image-ops.md says how close to PIL it is.
//
// Port `image` (BYTES, one file per row) in; port `tensor` out, [B, C, H, W] or [B, H, W, C].
// Without resize.size or center_crop the height and width are the images' own, and every
// row of a batch must then have the same.
#ifndef INFERD_OPS_IMAGE_IMAGE_TO_TENSOR_OP_H_
#define INFERD_OPS_IMAGE_IMAGE_TO_TENSOR_OP_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/pipeline/pipeline_op.h"

namespace inferd {

absl::StatusOr<std::unique_ptr<PipelineOp>> MakeImageToTensorOp(const OpLoadRequest& request);

}  // namespace inferd

#endif  // INFERD_OPS_IMAGE_IMAGE_TO_TENSOR_OP_H_
