# FindStarPU
# ----------
# Finds StarPU 1.3, Inria's task runtime (Debian: libstarpu-dev), through its pkg-config files,
# and StarPU-MPI where it was built with MPI (Debian: the same package, with Open MPI).
#
# Imported targets: StarPU::StarPU, and StarPU::MPI (StarPU-MPI with MPI's C library)
# Result variables: StarPU_FOUND, StarPU_VERSION, StarPU_MPI_FOUND

find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(_starpu QUIET starpu-1.3)
  pkg_check_modules(_starpu_mpi QUIET starpumpi-1.3)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(StarPU REQUIRED_VARS _starpu_LINK_LIBRARIES VERSION_VAR _starpu_VERSION)
set(StarPU_VERSION "${_starpu_VERSION}")

if(StarPU_FOUND AND NOT TARGET StarPU::StarPU)
  add_library(StarPU::StarPU INTERFACE IMPORTED)
  set_target_properties(StarPU::StarPU PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_starpu_INCLUDE_DIRS}"
    INTERFACE_LINK_LIBRARIES "${_starpu_LINK_LIBRARIES}")
endif()

set(StarPU_MPI_FOUND FALSE)
if(StarPU_FOUND AND _starpu_mpi_FOUND)
  # MPI's C API, found through the C++ compiler (projects need not enable C); without MPI's C++
  # bindings, which the C++ standard dropped long ago.
  set(MPI_CXX_SKIP_MPICXX ON)
  find_package(MPI QUIET COMPONENTS CXX)
  if(MPI_CXX_FOUND)
    set(StarPU_MPI_FOUND TRUE)
    if(NOT TARGET StarPU::MPI)
      add_library(StarPU::MPI INTERFACE IMPORTED)
      set_target_properties(StarPU::MPI PROPERTIES
        INTERFACE_INCLUDE_DIRECTORIES "${_starpu_mpi_INCLUDE_DIRS}"
        INTERFACE_LINK_LIBRARIES "${_starpu_mpi_LINK_LIBRARIES};MPI::MPI_CXX;StarPU::StarPU")
    endif()
  endif()
endif()
