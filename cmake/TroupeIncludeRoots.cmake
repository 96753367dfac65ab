# Each target sees only the folders it may include (docs/architecture.md, "Who may include whom").
# A library's headers are found through an include root in the build folder that holds nothing but
# a link to that library's folder: build/include-roots/F/F -> F/. The library puts the root on
# its PUBLIC include path, so `#include "F/x.hpp"` compiles exactly in the targets that link the
# library, directly or through their dependencies; an include of a folder a target does not link
# fails to compile. scripts/check-layering.py checks the same rules on the sources.
set(TROUPE_INCLUDE_ROOTS ${CMAKE_BINARY_DIR}/include-roots)

# The folder (relative to the repository root) of the CMakeLists.txt being read.
function(_troupe_current_folder out)
  file(RELATIVE_PATH folder ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  string(REGEX REPLACE "/.*" "" folder "${folder}")
  set(${out} ${folder} PARENT_SCOPE)
endfunction()

# Creates (once) the link NAME -> TARGET_PATH and its parent folders.
function(_troupe_link name target_path)
  if(NOT IS_SYMLINK ${name})
    get_filename_component(parent ${name} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${target_path} ${name} SYMBOLIC)
  endif()
endfunction()

# PUBLIC for libraries, INTERFACE for header-only ones, PRIVATE for programs and plugins.
function(_troupe_scope out target)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    set(${out} INTERFACE PARENT_SCOPE)
  elseif(type MATCHES "^(EXECUTABLE|MODULE_LIBRARY)$")
    set(${out} PRIVATE PARENT_SCOPE)
  else()
    set(${out} PUBLIC PARENT_SCOPE)
  endif()
endfunction()

# troupe_include_folders(TARGET FOLDER...): TARGET itself sees FOLDER/ (the whole folder). For a
# program or plugin that compiles another folder's sources or reads a header-only part of it.
function(troupe_include_folders target)
  foreach(folder IN LISTS ARGN)
    _troupe_link(${TROUPE_INCLUDE_ROOTS}/${folder}/${folder} ${CMAKE_SOURCE_DIR}/${folder})
    target_include_directories(${target} PRIVATE ${TROUPE_INCLUDE_ROOTS}/${folder})
  endforeach()
endfunction()

# troupe_expose(TARGET [HEADERS FILE...]): what links TARGET sees TARGET's folder — the whole of it,
# or with HEADERS only those files of it (for a folder that holds more than one layer).
function(troupe_expose target)
  cmake_parse_arguments(ARG "" "" "HEADERS" ${ARGN})
  _troupe_current_folder(folder)
  _troupe_scope(scope ${target})
  if(ARG_HEADERS)
    set(root ${TROUPE_INCLUDE_ROOTS}/${target})
    foreach(header IN LISTS ARG_HEADERS)
      _troupe_link(${root}/${folder}/${header} ${CMAKE_CURRENT_SOURCE_DIR}/${header})
    endforeach()
  else()
    set(root ${TROUPE_INCLUDE_ROOTS}/${folder})
    _troupe_link(${root}/${folder} ${CMAKE_SOURCE_DIR}/${folder})
  endif()
  target_include_directories(${target} ${scope} ${root})
endfunction()

# troupe_proto_library(TARGET PROTO): a static library of one .proto's generated code; what links
# it includes "FOLDER/NAME.pb.h" (the generated files live in an include root of their own).
function(troupe_proto_library target proto)
  _troupe_current_folder(folder)
  set(root ${TROUPE_INCLUDE_ROOTS}/${target})
  file(MAKE_DIRECTORY ${root}/${folder})
  add_library(${target} STATIC ${proto})
  protobuf_generate(TARGET ${target} LANGUAGE cpp PROTOC_OUT_DIR ${root}/${folder})
  target_link_libraries(${target} PUBLIC protobuf::libprotobuf)
  target_include_directories(${target} PUBLIC ${root})
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
