# Findlibdw.cmake -- finds elfutils' libdw (DWARF reading), shipped in the rocprofiler-sdk
# package's Modules directory as AMD's package does (written by `rocwasm sdk prefix`).
#
#   find_package(libdw [REQUIRED])
#
# Results: libdw_FOUND, libdw_INCLUDE_DIR, libdw_LIBRARY, libdw_VERSION (when pkg-config
# knows it) and the target libdw::libdw (an INTERFACE IMPORTED library carrying both).
# Looks first through pkg-config's libdw.pc, then for <elfutils/libdw.h> and libdw.so
# (under libdw_ROOT when it is set).

if(NOT libdw_INCLUDE_DIR OR NOT libdw_LIBRARY)
    find_package(PkgConfig QUIET)
    if(PkgConfig_FOUND)
        pkg_check_modules(_rocwasm_libdw QUIET libdw)
        if(_rocwasm_libdw_FOUND)
            find_path(
                libdw_INCLUDE_DIR
                NAMES elfutils/libdw.h
                HINTS ${_rocwasm_libdw_INCLUDE_DIRS} ${_rocwasm_libdw_INCLUDEDIR})
            find_library(
                libdw_LIBRARY
                NAMES dw
                HINTS ${_rocwasm_libdw_LIBRARY_DIRS} ${_rocwasm_libdw_LIBDIR})
            if(_rocwasm_libdw_VERSION)
                set(libdw_VERSION "${_rocwasm_libdw_VERSION}")
            endif()
        endif()
    endif()
endif()

find_path(
    libdw_INCLUDE_DIR
    NAMES elfutils/libdw.h
    HINTS ${libdw_ROOT}
    PATH_SUFFIXES include)
find_library(
    libdw_LIBRARY
    NAMES dw
    HINTS ${libdw_ROOT}
    PATH_SUFFIXES lib lib64)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(
    libdw
    REQUIRED_VARS libdw_LIBRARY libdw_INCLUDE_DIR
    VERSION_VAR libdw_VERSION)

if(libdw_FOUND AND NOT TARGET libdw::libdw)
    add_library(libdw::libdw INTERFACE IMPORTED)
    target_link_libraries(libdw::libdw INTERFACE "${libdw_LIBRARY}")
    target_include_directories(libdw::libdw SYSTEM INTERFACE "${libdw_INCLUDE_DIR}")
endif()

mark_as_advanced(libdw_INCLUDE_DIR libdw_LIBRARY)
