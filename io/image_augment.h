// The random augmenters of MXNet's ImageRecordIter beyond crop and mirror (its
// DefaultImageAugmenter and ImageNormalizeIter): an affine warp (rotation, shear, scale, aspect
// ratio), HSL jitter, and random contrast and illumination (Note [Image augmenters]).
#pragma once

#include <cstdint>
#include <string>

#include "io/image_codec.h"

namespace cohort {

struct ImageAugmentOptions {
  float max_rotate_angle = 0;  // degrees, uniform in [-max, max]
  float rotate = -1;           // a fixed angle when >= 0 (wins over max_rotate_angle)
  float max_shear_ratio = 0;   // uniform in [-max, max]
  float max_random_scale = 1;  // scale uniform in [min, max]
  float min_random_scale = 1;
  float max_aspect_ratio = 0;  // aspect 1 + uniform in [-max, max]
  float max_img_size = 1e10f;  // the warped image's sides are clamped to [min, max]
  float min_img_size = 0;
  int fill_value = 255;                          // the colour of pixels warped in from outside
  int random_h = 0, random_s = 0, random_l = 0;  // HSL offsets, uniform in [-r, r]
  float max_random_contrast = 0;                 // contrast 1 + uniform in [-max, max]
  float max_random_illumination = 0;             // illumination uniform in [-max, max]

  bool warps() const {
    return max_rotate_angle > 0 || rotate >= 0 || max_shear_ratio > 0 || max_random_scale != 1 ||
           min_random_scale != 1 || max_aspect_ratio > 0 || max_img_size < 1e10f ||
           min_img_size > 0;
  }
  bool jitters_hsl() const { return random_h != 0 || random_s != 0 || random_l != 0; }
  // A message naming the first option out of range, or empty.
  std::string Check() const;
};

// A sample's own stream of uniform numbers (splitmix64 from a per-sample seed), so its
// augmentation does not depend on the thread that makes it.
class SampleRandom {
 public:
  explicit SampleRandom(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  float Uniform(float low, float high);  // in [low, high]

 private:
  uint64_t state_;
};

// Note [Image augmenters]
// As MXNet 1.9.1's DefaultImageAugmenter, in its order: the affine warp (when any of its options
// is set), then the HSL jitter; ImageRecordIter crops and mirrors after them, and applies the
// contrast and illumination while normalizing: out = ((pixel - mean) · contrast + illumination)
// · scale / std. The warp maps the source through M = [[hs·cosθ - s·sinθ·ws, hs·sinθ +
// s·cosθ·ws], [-sinθ·ws, cosθ·ws]] (s the shear, hs = 2·scale/(1 + ratio), ws = ratio·hs),
// centred in an output of scale times the source's size (clamped to [min_img_size,
// max_img_size]), sampled bilinearly with fill_value outside, as OpenCV's warpAffine with
// INTER_LINEAR and BORDER_CONSTANT. HSL uses OpenCV's 8-bit convention (H in [0, 180), L and S in
// [0, 255]), each clamped to its range. The random numbers are Cohort's (a hash of the seed, the
// epoch and the record), not MXNet's: the same seed gives the same images, another seed others.
// An output of more than max_pixels (at most kMaxImagePixels) is refused before it is allocated.
void WarpAffine(const Image& in, const ImageAugmentOptions& o, SampleRandom& random, Image* out,
                uint64_t max_pixels = kMaxImagePixels);
void JitterHsl(Image* image, const ImageAugmentOptions& o, SampleRandom& random);

}  // namespace cohort
