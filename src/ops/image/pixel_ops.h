// Geometric operations on decoded pixels that are pure permutations (no arithmetic), as
// Pillow and torchvision do them.
#ifndef INFERD_OPS_IMAGE_PIXEL_OPS_H_
#define INFERD_OPS_IMAGE_PIXEL_OPS_H_

#include "ops/image/decoded_image.h"

namespace inferd {

// ImageOps.exif_transpose for EXIF orientation 1..8 (1, or anything else: unchanged).
DecodedImage Orient(const DecodedImage& image, int orientation);

// torchvision's CenterCrop((height, width)): top = round((H - height) / 2), left likewise,
// with Python's rounding (half to even); an image smaller than the crop is padded with zeros
// around it first, as torchvision pads.
DecodedImage CenterCrop(const DecodedImage& image, int height, int width);

}  // namespace inferd

#endif  // INFERD_OPS_IMAGE_PIXEL_OPS_H_
