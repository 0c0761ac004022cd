#include "ops/image/pixel_ops.h"

#include <cmath>
#include <cstring>

namespace inferd {
namespace {

DecodedImage Blank(int width, int height, int channels) {
  DecodedImage image;
  image.width = width;
  image.height = height;
  image.channels = channels;
  image.pixels.assign(static_cast<size_t>(width) * height * channels, 0);
  return image;
}

}  // namespace

DecodedImage Orient(const DecodedImage& image, int orientation) {
  if (orientation < 2 || orientation > 8) return image;
  const int w = image.width, h = image.height, c = image.channels;
  const bool swap = orientation >= 5;
  DecodedImage out = Blank(swap ? h : w, swap ? w : h, c);
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) {
      int sx = x, sy = y;
      switch (orientation) {
        case 2:
          sx = w - 1 - x;
          break;  // mirror left-right
        case 3:
          sx = w - 1 - x;
          sy = h - 1 - y;
          break;  // rotate 180
        case 4:
          sy = h - 1 - y;
          break;  // mirror top-bottom
        case 5:
          sx = y;
          sy = x;
          break;  // transpose
        case 6:
          sx = y;
          sy = h - 1 - x;
          break;  // rotate 90 clockwise
        case 7:
          sx = w - 1 - y;
          sy = h - 1 - x;
          break;  // transverse
        case 8:
          sx = w - 1 - y;
          sy = x;
          break;  // rotate 90 counter-clockwise
      }
      std::memcpy(out.row(y) + x * c, image.row(sy) + sx * c, static_cast<size_t>(c));
    }
  }
  return out;
}

DecodedImage CenterCrop(const DecodedImage& image, int height, int width) {
  if (image.height == height && image.width == width) return image;
  // Padding first (torchvision: left/top get the floor of half the shortfall).
  const int pad_left = width > image.width ? (width - image.width) / 2 : 0;
  const int pad_top = height > image.height ? (height - image.height) / 2 : 0;
  const int padded_w = std::max(image.width, width);
  const int padded_h = std::max(image.height, height);
  const int top = static_cast<int>(std::nearbyint((padded_h - height) / 2.0));
  const int left = static_cast<int>(std::nearbyint((padded_w - width) / 2.0));
  const int c = image.channels;
  DecodedImage out = Blank(width, height, c);
  for (int y = 0; y < height; ++y) {
    const int sy = y + top - pad_top;
    if (sy < 0 || sy >= image.height) continue;
    for (int x = 0; x < width; ++x) {
      const int sx = x + left - pad_left;
      if (sx < 0 || sx >= image.width) continue;
      std::memcpy(out.row(y) + x * c, image.row(sy) + sx * c, static_cast<size_t>(c));
    }
  }
  return out;
}

}  // namespace inferd
