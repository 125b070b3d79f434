# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Writes the pkg-config files at install time (CMakeLists.txt includes this
# from install(CODE)), once the prefix is known: `cmake --install --prefix`
# may differ from CMAKE_INSTALL_PREFIX at configure time.
#
# In:  CMAKE_INSTALL_PREFIX      the install's prefix
#      WSCHED_PC_LIBDIR          CMAKE_INSTALL_LIBDIR (the .pc files go to
#                                its pkgconfig/)
#      WSCHED_PC_SYSTEM_DIRS     the compiler's own library directories
#      WSCHED_PC_TEMPLATES       NAME.pc.in files (configure_file @ONLY
#                                templates), each written to NAME.pc next to it
#
# The prefix the files name, @WSCHED_PC_PREFIX@:
#   - relative to the file, ${pcfiledir}/../.. (as many .. as the libdir is
#     deep, plus one), so that an installed tree still works after it is
#     moved or unpacked elsewhere;
#   - absolute when the libdir is one the compiler searches by itself, or is
#     in PKG_CONFIG_SYSTEM_LIBRARY_PATH at install time (a /usr install: the
#     Debian package). pkg-config leaves out -L and -I for its system
#     directories only when written exactly so: /usr/lib/x86_64-linux-gnu,
#     not .../pkgconfig/../../../lib/x86_64-linux-gnu, and an explicit
#     -I/usr/include or -L of a system directory reorders the search. Such a
#     tree belongs to a package manager and is not moved anyway.
#   - absolute when the libdir is an absolute path (outside the prefix).
get_filename_component(_wsched_prefix "${CMAKE_INSTALL_PREFIX}" ABSOLUTE)
set(_wsched_libdir "${_wsched_prefix}/${WSCHED_PC_LIBDIR}")
if(IS_ABSOLUTE "${WSCHED_PC_LIBDIR}")
  set(_wsched_libdir "${WSCHED_PC_LIBDIR}")
endif()
get_filename_component(_wsched_libdir "${_wsched_libdir}" ABSOLUTE)
set(_wsched_system ${WSCHED_PC_SYSTEM_DIRS})
if(DEFINED ENV{PKG_CONFIG_SYSTEM_LIBRARY_PATH})
  string(REPLACE ":" ";" _wsched_env "$ENV{PKG_CONFIG_SYSTEM_LIBRARY_PATH}")
  list(APPEND _wsched_system ${_wsched_env})
endif()
set(_wsched_is_system FALSE)
foreach(_wsched_d ${_wsched_system})
  get_filename_component(_wsched_d "${_wsched_d}" ABSOLUTE)
  if(_wsched_d STREQUAL _wsched_libdir)
    set(_wsched_is_system TRUE)
  endif()
endforeach()
if(_wsched_is_system OR IS_ABSOLUTE "${WSCHED_PC_LIBDIR}")
  set(WSCHED_PC_PREFIX "${_wsched_prefix}")
else()
  file(RELATIVE_PATH _wsched_up "${_wsched_libdir}/pkgconfig" "${_wsched_prefix}")
  string(REGEX REPLACE "/$" "" _wsched_up "${_wsched_up}") # ../../ -> ../..
  set(WSCHED_PC_PREFIX "\${pcfiledir}/${_wsched_up}")
endif()
foreach(_wsched_in ${WSCHED_PC_TEMPLATES})
  string(REGEX REPLACE "\\.in$" "" _wsched_out "${_wsched_in}")
  configure_file("${_wsched_in}" "${_wsched_out}" @ONLY)
endforeach()
foreach(_wsched_v prefix libdir system env is_system d up in out)
  unset(_wsched_${_wsched_v})
endforeach()
