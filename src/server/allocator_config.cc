// jemalloc's start-up options, read by jemalloc itself through this well-known symbol.
//
// Why: with jemalloc's default decay (dirty pages returned to the kernel gradually over
// 10 s), every forward pass re-faults the large activation tensors it has just freed; with
// decay off, freed pages stay mapped for the next batch. bench/allocator_ab.sh measures the
// two side by side with glibc malloc (page faults and latency per request:
// bench/results/2026-12-01-allocator-b1.md and 2026-12-01-allocator-b8.md). The price is that
// memory freed after a burst is kept for reuse rather than returned. The MALLOC_CONF
// environment variable still overrides these settings (jemalloc reads it after this string).
#ifdef INFERD_USE_JEMALLOC
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's API.
const char* malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1";
}
#endif
