# FindLibdeflate
# --------------
# Finds libdeflate, a fast whole-buffer DEFLATE/gzip library (Debian: libdeflate-dev).
#
# Imported target:  Libdeflate::Libdeflate
# Result variables: Libdeflate_FOUND, Libdeflate_INCLUDE_DIRS, Libdeflate_LIBRARIES, Libdeflate_VERSION

find_path(Libdeflate_INCLUDE_DIR NAMES libdeflate.h)
find_library(Libdeflate_LIBRARY NAMES deflate)

if(Libdeflate_INCLUDE_DIR AND EXISTS "${Libdeflate_INCLUDE_DIR}/libdeflate.h")
  file(STRINGS "${Libdeflate_INCLUDE_DIR}/libdeflate.h" _libdeflate_version REGEX "^#define LIBDEFLATE_VERSION_STRING")
  string(REGEX MATCH "[0-9]+(\\.[0-9]+)*" Libdeflate_VERSION "${_libdeflate_version}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Libdeflate REQUIRED_VARS Libdeflate_LIBRARY Libdeflate_INCLUDE_DIR
                                  VERSION_VAR Libdeflate_VERSION)

if(Libdeflate_FOUND)
  set(Libdeflate_INCLUDE_DIRS "${Libdeflate_INCLUDE_DIR}")
  set(Libdeflate_LIBRARIES "${Libdeflate_LIBRARY}")
  if(NOT TARGET Libdeflate::Libdeflate)
    add_library(Libdeflate::Libdeflate UNKNOWN IMPORTED)
    set_target_properties(Libdeflate::Libdeflate PROPERTIES
      IMPORTED_LOCATION "${Libdeflate_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${Libdeflate_INCLUDE_DIR}")
  endif()
endif()
mark_as_advanced(Libdeflate_INCLUDE_DIR Libdeflate_LIBRARY)
