// MPI_CHECK: throws cohort::Error with MPI's error string when an MPI call does not succeed.
// Communicators must use MPI_ERRORS_RETURN for errors to reach it instead of aborting the job.
#pragma once

#include <mpi.h>

#include "base/error.h"

#define MPI_CHECK(call)                                                         \
  do {                                                                          \
    int cohort_mpi_status_ = (call);                                            \
    if (cohort_mpi_status_ != MPI_SUCCESS) {                                    \
      char cohort_mpi_text_[MPI_MAX_ERROR_STRING];                              \
      int cohort_mpi_len_ = 0;                                                  \
      MPI_Error_string(cohort_mpi_status_, cohort_mpi_text_, &cohort_mpi_len_); \
      COHORT_THROW() << "MPI call " #call " failed: "                           \
                     << std::string(cohort_mpi_text_, cohort_mpi_len_);         \
    }                                                                           \
  } while (0)
