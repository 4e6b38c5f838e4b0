// The affine warp and HSL jitter of ImageRecordIter (Note [Image augmenters]).
#include "io/image_augment.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "base/error.h"

namespace cohort {

std::string ImageAugmentOptions::Check() const {
  auto bad = [](const char* key, const std::string& expected) {
    return std::string(key) + ": expected " + expected;
  };
  if (!(max_rotate_angle >= 0 && max_rotate_angle <= 360))
    return bad("max_rotate_angle", "0 to 360");
  if (!(max_shear_ratio >= 0 && max_shear_ratio <= 10)) return bad("max_shear_ratio", "0 to 10");
  if (!(min_random_scale > 0 && min_random_scale <= max_random_scale && max_random_scale <= 16)) {
    return bad("min_random_scale/max_random_scale", "0 < min <= max <= 16");
  }
  if (!(max_aspect_ratio >= 0 && max_aspect_ratio < 1)) return bad("max_aspect_ratio", "0 to 1");
  if (!(min_img_size >= 0 && min_img_size <= max_img_size)) {
    return bad("min_img_size/max_img_size", "0 <= min <= max");
  }
  if (fill_value < 0 || fill_value > 255) return bad("fill_value", "0 to 255");
  if (random_h < 0 || random_h > 180 || random_s < 0 || random_s > 255 || random_l < 0 ||
      random_l > 255) {
    return bad("random_h/random_s/random_l", "0 to 180 / 255 / 255");
  }
  if (!(max_random_contrast >= 0 && max_random_contrast <= 1)) {
    return bad("max_random_contrast", "0 to 1");
  }
  if (!(max_random_illumination >= 0 && max_random_illumination <= 255)) {
    return bad("max_random_illumination", "0 to 255");
  }
  return "";
}

uint64_t SampleRandom::Next() {  // splitmix64
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float SampleRandom::Uniform(float low, float high) {
  const double unit = static_cast<double>(Next() >> 11) * 0x1.0p-53;  // [0, 1)
  return static_cast<float>(low + (high - low) * unit);
}

namespace {

// A uniform integer in [-r, r] (MXNet's NextUInt32(2r) - r).
int SymmetricInt(SampleRandom& random, int r) {
  return r <= 0 ? 0 : static_cast<int>(random.Next() % static_cast<uint64_t>(2 * r + 1)) - r;
}

}  // namespace

void WarpAffine(const Image& in, const ImageAugmentOptions& o, SampleRandom& random, Image* out,
                uint64_t max_pixels) {
  const float shear = random.Uniform(-o.max_shear_ratio, o.max_shear_ratio);
  const int max_angle = static_cast<int>(o.max_rotate_angle);
  const float angle =
      o.rotate >= 0 ? o.rotate : static_cast<float>(SymmetricInt(random, max_angle));
  const float scale = random.Uniform(o.min_random_scale, o.max_random_scale);
  const float ratio = random.Uniform(-o.max_aspect_ratio, o.max_aspect_ratio) + 1;
  const float a = std::cos(angle / 180.0f * std::numbers::pi_v<float>);
  const float b = std::sin(angle / 180.0f * std::numbers::pi_v<float>);
  const float hs = 2 * scale / (1 + ratio), ws = ratio * hs;
  // In float, as MXNet's (the sizes must match its to the pixel).
  const float fw =
      std::max(o.min_img_size, std::min(o.max_img_size, scale * static_cast<float>(in.width)));
  const float fh =
      std::max(o.min_img_size, std::min(o.max_img_size, scale * static_cast<float>(in.height)));
  // Refused before anything is allocated (Note [Decode budget]): min_img_size or a random scale
  // can ask for more pixels than an image may have, or than an int holds.
  max_pixels = std::min(max_pixels, kMaxImagePixels);
  if (!(std::max<double>(fw, 1) * std::max<double>(fh, 1) <= static_cast<double>(max_pixels))) {
    COHORT_THROW() << "warping a " << in.width << "x" << in.height << " image makes it "
                   << static_cast<int64_t>(fw) << "x" << static_cast<int64_t>(fh) << " (scale "
                   << scale << ", min_img_size " << o.min_img_size << ", max_img_size "
                   << o.max_img_size << "), more than the " << max_pixels
                   << " pixels an image may have";
  }
  const int width = static_cast<int>(fw), height = static_cast<int>(fh);
  // Forward map (MXNet's M), centred; sampled through its inverse.
  const double m00 = hs * a - shear * b * ws, m01 = hs * b + shear * a * ws;
  const double m10 = -b * ws, m11 = a * ws;
  const double m02 = (width - (m00 * in.width + m01 * in.height)) / 2;
  const double m12 = (height - (m10 * in.width + m11 * in.height)) / 2;
  const double det = m00 * m11 - m01 * m10;
  const double i00 = m11 / det, i01 = -m01 / det, i10 = -m10 / det, i11 = m00 / det;
  const int c = in.channels;
  out->width = std::max(width, 1);
  out->height = std::max(height, 1);
  out->channels = c;
  out->pixels.assign(static_cast<size_t>(out->width) * out->height * c, 0);
  const auto fill = static_cast<float>(o.fill_value);
  auto sample = [&](int y, int x, int k) {
    return y < 0 || y >= in.height || x < 0 || x >= in.width ? fill
                                                             : static_cast<float>(in.at(y, x, k));
  };
  for (int y = 0; y < out->height; ++y) {
    for (int x = 0; x < out->width; ++x) {
      const double dx = x - m02, dy = y - m12;
      const double sx = i00 * dx + i01 * dy, sy = i10 * dx + i11 * dy;
      const int x0 = static_cast<int>(std::floor(sx)), y0 = static_cast<int>(std::floor(sy));
      const float fx = static_cast<float>(sx - x0), fy = static_cast<float>(sy - y0);
      uint8_t* dst = &out->pixels[(static_cast<size_t>(y) * out->width + x) * c];
      for (int k = 0; k < c; ++k) {
        const float top = sample(y0, x0, k) * (1 - fx) + sample(y0, x0 + 1, k) * fx;
        const float bottom = sample(y0 + 1, x0, k) * (1 - fx) + sample(y0 + 1, x0 + 1, k) * fx;
        const float v = top * (1 - fy) + bottom * fy;
        dst[k] = static_cast<uint8_t>(std::clamp(std::lround(v), 0l, 255l));
      }
    }
  }
}

namespace {

// OpenCV's 8-bit RGB <-> HLS: H in [0, 180) (degrees / 2), L and S in [0, 255].
void RgbToHls(const uint8_t* rgb, float hls[3]) {
  const float r = rgb[0] / 255.0f, g = rgb[1] / 255.0f, b = rgb[2] / 255.0f;
  const float vmax = std::max({r, g, b}), vmin = std::min({r, g, b});
  const float l = (vmax + vmin) / 2;
  float h = 0, s = 0;
  const float diff = vmax - vmin;
  if (diff > 1e-6f) {
    s = l < 0.5f ? diff / (vmax + vmin) : diff / (2 - vmax - vmin);
    if (vmax == r) {
      h = 60 * (g - b) / diff;
    } else if (vmax == g) {
      h = 120 + 60 * (b - r) / diff;
    } else {
      h = 240 + 60 * (r - g) / diff;
    }
    if (h < 0) h += 360;
  }
  hls[0] = h / 2;
  hls[1] = l * 255;
  hls[2] = s * 255;
}

void HlsToRgb(const float hls[3], uint8_t* rgb) {
  const float h = hls[0] * 2, l = hls[1] / 255, s = hls[2] / 255;
  float out[3] = {l, l, l};
  if (s > 0) {
    const float q = l <= 0.5f ? l * (1 + s) : l + s - l * s, p = 2 * l - q;
    const float hue[3] = {h + 120, h, h - 120};
    for (int k = 0; k < 3; ++k) {
      float t = std::fmod(hue[k] + 360, 360.0f);
      out[k] = t < 60    ? p + (q - p) * t / 60
               : t < 180 ? q
               : t < 240 ? p + (q - p) * (240 - t) / 60
                         : p;
    }
  }
  for (int k = 0; k < 3; ++k) {
    rgb[k] = static_cast<uint8_t>(std::clamp(std::lround(out[k] * 255), 0l, 255l));
  }
}

}  // namespace

void JitterHsl(Image* image, const ImageAugmentOptions& o, SampleRandom& random) {
  const int offset[3] = {SymmetricInt(random, o.random_h), SymmetricInt(random, o.random_l),
                         SymmetricInt(random, o.random_s)};
  if (image->channels != 3) return;  // gray images have no hue or saturation
  const float limit[3] = {180, 255, 255};
  const size_t pixels = static_cast<size_t>(image->width) * image->height;
  for (size_t i = 0; i < pixels; ++i) {
    uint8_t* rgb = &image->pixels[i * 3];
    float hls[3];
    RgbToHls(rgb, hls);
    for (int k = 0; k < 3; ++k) {
      hls[k] = std::clamp(std::round(hls[k]) + static_cast<float>(offset[k]), 0.0f, limit[k]);
    }
    HlsToRgb(hls, rgb);
  }
}

}  // namespace cohort
