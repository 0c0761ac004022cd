// jemalloc's start-up options, read by jemalloc itself through this well-known symbol.
//
// Why: with jemalloc's default decay (dirty pages returned to the kernel gradually over
// 10 s), every forward pass re-faulted the large activation tensors it had just freed:
// resnet18 ran 41 ms per image instead of 33 ms (bench/results/*-allocator-*.md). With decay
// off, freed pages stay mapped for the next batch, and inferd is as fast as with glibc malloc
// while keeping jemalloc's behaviour under many threads. The price is that memory freed after
// a burst is kept for reuse rather than returned. The MALLOC_CONF environment variable still
// overrides these settings (jemalloc reads it after this string).
#ifdef INFERD_USE_JEMALLOC
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's API.
const char* malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1";
}
#endif
