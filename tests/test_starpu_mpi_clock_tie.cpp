// Tying MPI ranks' clocks (exec/mpi_clock_tie.hpp), run by ctest under mpiexec like the StarPU-MPI
// backend's test (2 ranks, and 4 oversubscribed). On one machine every rank reads one monotonic
// clock, so the true offsets are known: 0 between machine clocks, and whatever a fake process
// clock was started with. Each estimate must hold its own bound, whether it came from the shared
// clock or from ping-pongs.
#include <gantry/exec/mpi_clock_tie.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace gantry;

namespace {

// MPI, once for the whole program, finished at exit.
MPI_Comm world() {
  static const bool started = [] {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    std::atexit([] { MPI_Finalize(); });
    return true;
  }();
  (void)started;
  return MPI_COMM_WORLD;
}

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

// True on every rank when every rank holds the same value.
bool same_on_every_rank(double x, MPI_Comm comm) {
  double low = x, high = x;
  MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_DOUBLE, MPI_MAX, comm);
  return low == high;
}

// Whether every rank runs on rank 0's machine (ctest's runs do).
bool one_machine(MPI_Comm comm) {
  char name[MPI_MAX_PROCESSOR_NAME + 1] = {}, first[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::memcpy(first, name, sizeof name);
  MPI_Bcast(first, MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR, 0, comm);
  int same = std::strcmp(name, first) == 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, comm);
  return same == 1;
}

}  // namespace

TEST_CASE("ranks on rank 0's machine share its clock exactly; ping-pongs find it within their bound") {
  const MPI_Comm comm = world();
  REQUIRE(one_machine(comm));
  const auto shared = tie_machine_clocks(comm);
  CHECK(shared.offset_us == 0);
  CHECK(shared.uncertainty_us == 0);

  for (const std::size_t rounds : {std::size_t{1}, std::size_t{32}}) {
    CAPTURE(rounds);
    const auto pinged = tie_machine_clocks(comm, rounds, true);
    CHECK(pinged.uncertainty_us >= 0);
    CHECK(std::isfinite(pinged.uncertainty_us));
    CHECK(same_on_every_rank(pinged.uncertainty_us, comm));
    if (rank_of(comm) == 0) CHECK(pinged.offset_us == 0);
    // The true offset is 0: the answer was read inside the round trip, half of which is the bound.
    CHECK_MESSAGE(std::abs(pinged.offset_us) <= pinged.uncertainty_us + 1e-3, "offset ", pinged.offset_us,
                  " us, bound ", pinged.uncertainty_us, " us");
  }
}

TEST_CASE("a clock that counts from each process's own start is tied through the machine's") {
  const MPI_Comm comm = world();
  REQUIRE(one_machine(comm));
  const int rank = rank_of(comm);
  // Rank r's process clock reads 1000 r + 5 us less than rank 0's at every instant.
  const auto process_now = [rank] { return machine_clock_us() - 1000.0 * rank - 5; };
  for (const bool by_messages : {false, true}) {
    CAPTURE(by_messages);
    const auto machine = tie_machine_clocks(comm, 32, by_messages);
    const auto tie = tie_process_clocks(machine, process_now, comm);
    CHECK(tie.uncertainty_us >= machine.uncertainty_us);
    CHECK(same_on_every_rank(tie.uncertainty_us, comm));
    CHECK_MESSAGE(std::abs(tie.offset_us - (-1000.0 * rank)) <= tie.uncertainty_us + 1e-3, "offset ", tie.offset_us,
                  " us, bound ", tie.uncertainty_us, " us");
    if (!by_messages) CHECK(tie.uncertainty_us < 1000);  // a few clock readings, no message
  }
}
