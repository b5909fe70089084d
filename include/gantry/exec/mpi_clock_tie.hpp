// Ties the clocks of MPI ranks to rank 0's, so that times measured on different ranks can be put
// on one timeline: each rank's offset (its clock minus rank 0's) and a bound on the error of that
// offset. Used by the StarPU-MPI backend (exec/starpu_mpi_backend.hpp); needs MPI only.
//
// Two steps. First the machine clocks (std::chrono::steady_clock): ranks on rank 0's machine share
// one clock (offset 0, exact); a rank elsewhere exchanges `rounds` ping-pongs with rank 0 and keeps
// the one of least round trip, taking its clock's reading against rank 0's at the middle of the
// round trip (Cristian's method). The reply was read somewhere inside the round trip, so the error
// is at most half of it. Then, when a process's clock of interest counts from its own start (as
// StarPU's does), the offset moves by the difference of the two processes' clocks against their
// machine clocks, each read between two machine-clock readings (their spread bounds its error).
// Drift during a run is not corrected (NTP-disciplined clocks drift by microseconds per second).
#pragma once

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // MPI's C API only (Open MPI's C++ bindings warn under -Wextra)
#endif
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <limits>
#include <vector>

namespace gantry {

// A rank's clock against rank 0's, in microseconds.
struct mpi_clock_tie {
  double offset_us = 0;       // this rank's clock minus rank 0's, at one instant
  double uncertainty_us = 0;  // the most any rank's offset can be off (the same on every rank)
};

// The machine's monotonic clock, in microseconds.
[[nodiscard]] inline double machine_clock_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Each rank's machine clock against rank 0's: exact on rank 0's machine, by ping-pongs elsewhere
// (and everywhere with `by_messages`, as a test of the messages' path). Collective on comm. Run it
// before threads that poll the CPUs start: a ping-pong that waits for a core is a wide bound.
[[nodiscard]] inline mpi_clock_tie tie_machine_clocks(MPI_Comm comm, std::size_t rounds = 32,
                                                      bool by_messages = false) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  char name[MPI_MAX_PROCESSOR_NAME + 1] = {}, first[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::memcpy(first, name, sizeof name);
  MPI_Bcast(first, MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR, 0, comm);
  const int elsewhere = by_messages || std::strcmp(name, first) != 0 ? 1 : 0;
  std::vector<int> remote(static_cast<std::size_t>(ranks), 0);
  MPI_Allgather(&elsewhere, 1, MPI_INT, remote.data(), 1, MPI_INT, comm);
  const int tries = static_cast<int>(std::max<std::size_t>(rounds, 1));
  mpi_clock_tie tie;
  for (int r = 1; r < ranks; ++r) {
    if (remote[static_cast<std::size_t>(r)] == 0) continue;
    if (rank == 0) {
      double best_round_trip = std::numeric_limits<double>::infinity(), best_offset = 0;
      for (int i = 0; i < tries; ++i) {
        const double sent = machine_clock_us();
        double theirs = 0;
        MPI_Send(&sent, 1, MPI_DOUBLE, r, 0, comm);
        MPI_Recv(&theirs, 1, MPI_DOUBLE, r, 0, comm, MPI_STATUS_IGNORE);
        const double back = machine_clock_us();
        if (back - sent < best_round_trip) {
          best_round_trip = back - sent;
          best_offset = theirs - (sent + back) / 2;
        }
      }
      const double result[2] = {best_offset, best_round_trip / 2};
      MPI_Send(result, 2, MPI_DOUBLE, r, 1, comm);
    } else if (rank == r) {
      for (int i = 0; i < tries; ++i) {
        double sent = 0;
        MPI_Recv(&sent, 1, MPI_DOUBLE, 0, 0, comm, MPI_STATUS_IGNORE);
        const double mine = machine_clock_us();
        MPI_Send(&mine, 1, MPI_DOUBLE, 0, 0, comm);
      }
      double result[2] = {0, 0};
      MPI_Recv(result, 2, MPI_DOUBLE, 0, 1, comm, MPI_STATUS_IGNORE);
      tie = {result[0], result[1]};
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &tie.uncertainty_us, 1, MPI_DOUBLE, MPI_MAX, comm);
  return tie;
}

// `machine` (tie_machine_clocks) moved to a clock that counts from some instant of its own in each
// process: process_now() in microseconds (StarPU's starpu_timing_now, say). Collective on comm.
template <class ProcessClock>
[[nodiscard]] mpi_clock_tie tie_process_clocks(const mpi_clock_tie& machine, ProcessClock&& process_now,
                                               MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  double base = 0, spread = std::numeric_limits<double>::infinity();  // machine clock - process clock
  for (int i = 0; i < 16; ++i) {
    const double before = machine_clock_us();
    const double process = process_now();
    const double after = machine_clock_us();
    if (after - before < spread) {
      spread = after - before;
      base = (before + after) / 2 - process;
    }
  }
  double first[2] = {base, spread};
  MPI_Bcast(first, 2, MPI_DOUBLE, 0, comm);
  mpi_clock_tie tie{machine.offset_us + first[0] - base, machine.uncertainty_us};
  if (rank != 0) tie.uncertainty_us += first[1] + spread;
  MPI_Allreduce(MPI_IN_PLACE, &tie.uncertainty_us, 1, MPI_DOUBLE, MPI_MAX, comm);
  return tie;
}

}  // namespace gantry
