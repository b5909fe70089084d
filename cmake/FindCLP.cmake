# FindCLP
# -------
# Finds COIN-OR CLP, the LP solver (Debian: coinor-libclp-dev), and the CoinUtils it needs.
#
# Imported target:  CLP::CLP
# Result variables: CLP_FOUND, CLP_INCLUDE_DIRS, CLP_LIBRARIES, CLP_VERSION

find_path(CLP_INCLUDE_DIR NAMES ClpSimplex.hpp PATH_SUFFIXES coin)
find_library(CLP_LIBRARY NAMES Clp)
find_library(CLP_COINUTILS_LIBRARY NAMES CoinUtils)

if(CLP_INCLUDE_DIR AND EXISTS "${CLP_INCLUDE_DIR}/ClpConfig.h")
  file(STRINGS "${CLP_INCLUDE_DIR}/ClpConfig.h" _clp_version REGEX "^#define CLP_VERSION \"")
  string(REGEX MATCH "[0-9]+(\\.[0-9]+)*" CLP_VERSION "${_clp_version}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CLP REQUIRED_VARS CLP_LIBRARY CLP_COINUTILS_LIBRARY CLP_INCLUDE_DIR
                                  VERSION_VAR CLP_VERSION)

if(CLP_FOUND)
  set(CLP_INCLUDE_DIRS "${CLP_INCLUDE_DIR}")
  set(CLP_LIBRARIES "${CLP_LIBRARY}" "${CLP_COINUTILS_LIBRARY}")
  if(NOT TARGET CLP::CLP)
    add_library(CLP::CLP UNKNOWN IMPORTED)
    set_target_properties(CLP::CLP PROPERTIES
      IMPORTED_LOCATION "${CLP_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${CLP_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES "${CLP_COINUTILS_LIBRARY}")
  endif()
endif()
mark_as_advanced(CLP_INCLUDE_DIR CLP_LIBRARY CLP_COINUTILS_LIBRARY)
