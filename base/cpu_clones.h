// COHORT_CPU_CLONES: a function compiled for AVX2 and AVX-512 too (Note [CPU clones]).
#pragma once

// Note [CPU clones]
// The build targets baseline x86-64 (SSE2) so that a binary runs on any x86-64 node of a job.
// Transcendental loops are compute bound, so a function marked COHORT_CPU_CLONES is compiled
// also for AVX2 and AVX-512 and the loader picks the widest the CPU has (GCC's target_clones,
// an ifunc). The clones do the same IEEE operations in the same order (-ffp-contract=off keeps FMA
// out), so every CPU computes identical results. tanh over LeNet's first layer (a loop alone):
// 2.7 ms -> 0.45 ms. Callees must be inlined into the clone to benefit (always_inline).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define COHORT_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define COHORT_CPU_CLONES
#endif
