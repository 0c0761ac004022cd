// Giving back the OpenMP worker threads that LibTorch and llama.cpp (ggml) keep per thread.
//
// libgomp gives every thread that starts a parallel region a team of workers of its own and
// keeps it after the region ends. Between regions its workers spin, unless libgomp counts
// more of its threads than the CPUs the process may use: then every worker spins only ~1000
// rounds and sleeps, and each of the hundreds of parallel regions in one forward pass pays a
// futex wake-up per worker. On 2 cores the loader thread's team (warm-up and probe runs) next
// to an instance thread's team is already one too many: text_classifier's batch-1 forward
// pass took 12.4 ms on its instance thread beside the loader's idle team and 7.9 ms once that
// team was given back (bench/results/2026-12-03-openmp-teams.md). A thread that will not run
// a model for a while calls ReleaseOpenMpTeam, and libgomp counts only the teams in use.
#ifndef INFERD_COMMON_OPENMP_TEAM_H_
#define INFERD_COMMON_OPENMP_TEAM_H_

namespace inferd {

// Ends the calling thread's OpenMP team (omp_pause_resource, soft): its workers exit, and the
// next parallel region on this thread starts a new team (one thread start per worker, tens of
// microseconds). A no-op where no OpenMP runtime is loaded or the thread has no team; never
// call it inside a parallel region.
void ReleaseOpenMpTeam();

}  // namespace inferd

#endif  // INFERD_COMMON_OPENMP_TEAM_H_
