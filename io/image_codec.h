// JPEG and PNG images in memory: decoding (libjpeg-turbo's libjpeg API, libpng) for the image
// record iterator, encoding for cohort-im2rec, and bilinear resizing for both. No hand-written
// codec.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cohort {

// 8-bit pixels, rows top to bottom, channels interleaved (RGB for 3, gray for 1).
struct Image {
  int width = 0, height = 0, channels = 0;
  std::vector<uint8_t> pixels;  // height · width · channels

  uint8_t at(int y, int x, int c) const {
    return pixels[(static_cast<size_t>(y) * width + x) * channels + c];
  }
};

// The most pixels a decoded image may have (16384 x 16384; OpenCV's own cap is 2^30): a header
// can claim 65535 x 65535 in a few bytes, and decoding would allocate 12 GB first (found by
// fuzzing).
constexpr uint64_t kMaxImagePixels = uint64_t{1} << 28;
// The largest shorter side an image may be resized to (data.resize, cohort-im2rec --resize): a
// square of it holds kMaxImagePixels.
constexpr int64_t kMaxResizeSide = int64_t{1} << 14;

// Decodes a JPEG or PNG (told apart by their signatures) into `channels` (3: RGB, 1: gray; an
// image with the other count is converted, an alpha channel dropped). Throws an Error naming
// what is wrong (not JPEG or PNG, corrupt or truncated data): never crashes, never returns a
// partly decoded image. *out's memory is reused. An image of more than max_pixels (at most
// kMaxImagePixels) is refused before its pixels are allocated.
void DecodeImage(std::string_view bytes, int channels, Image* out,
                 uint64_t max_pixels = kMaxImagePixels);

// Encodes as JPEG (quality 1..100, 4:2:0 as libjpeg's default) or PNG (lossless).
std::string EncodeJpeg(const Image& image, int quality);
std::string EncodePng(const Image& image);

// Resizes to width x height, bilinear with OpenCV's pixel-center mapping (cv::resize's
// INTER_LINEAR, MXNet's default inter_method): within one level of OpenCV's fixed-point result.
// *out's memory is reused.
void ResizeImage(const Image& in, int width, int height, Image* out);
// Resizes so that the shorter side is `shorter` and the longer one shorter·long/short, truncated
// (what MXNet's `resize` and im2rec's --resize do); refused before allocating when the result
// would have more than max_pixels (at most kMaxImagePixels).
void ResizeShorterSide(const Image& in, int64_t shorter, Image* out,
                       uint64_t max_pixels = kMaxImagePixels);

}  // namespace cohort
