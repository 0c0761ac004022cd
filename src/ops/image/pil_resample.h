// Pillow's bilinear resize of 8-bit images (Image.resize(size, Image.BILINEAR), what
// torchvision's Resize does to a PIL image), reproduced operation for operation so the bytes
// are identical to Pillow's for the same input pixels: per axis a triangle filter whose
// support grows with the downscaling factor (that is the antialiasing), coefficients
// normalised in double and rounded to 22-bit fixed point, the horizontal pass first over only
// the source rows the vertical pass reads, each pass skipped when its size is unchanged.
// Read from Pillow's src/libImaging/Resample.c (ImagingResampleInner and its helpers).
#ifndef INFERD_OPS_IMAGE_PIL_RESAMPLE_H_
#define INFERD_OPS_IMAGE_PIL_RESAMPLE_H_

#include "ops/image/decoded_image.h"

namespace inferd {

// `image` resized to `width` x `height` (both >= 1).
DecodedImage PilBilinearResize(const DecodedImage& image, int width, int height);

}  // namespace inferd

#endif  // INFERD_OPS_IMAGE_PIL_RESAMPLE_H_
