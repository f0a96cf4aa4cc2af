#===- GAAddLibrary.cmake - helpers for ga libraries ----------------------===#

# add_ga_library(name src... [DEPENDS tgt...] [LINK_LIBS lib...])
#
# A static library linked against libMLIR.so (and libLLVM.so, which its users
# need for the LLVM symbols our code references directly), exported in the GA
# CMake package as GA::<name>.
function(add_ga_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${GA_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${GA_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  add_dependencies(${name} mlir-headers GAIncGen ${ARG_DEPENDS})
  target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS} MLIR LLVM)
  target_compile_features(${name} PUBLIC cxx_std_17)
  ga_sanitize(${name})
  install(TARGETS ${name} EXPORT GATargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()

# ga_sanitize(target)
#
# GA_ENABLE_SANITIZERS (see the top-level CMakeLists.txt) for one target: its
# sources are instrumented, and whatever links it (an executable, a shared
# library, or a static library's users) links the sanitizer runtime.
function(ga_sanitize name)
  if(NOT GA_SANITIZER_COMPILE_FLAGS)
    return()
  endif()
  target_compile_options(${name} PRIVATE ${GA_SANITIZER_COMPILE_FLAGS})
  get_target_property(type ${name} TYPE)
  if(type STREQUAL "STATIC_LIBRARY")
    target_link_options(${name} INTERFACE ${GA_SANITIZER_LINK_FLAGS})
  else()
    target_link_options(${name} PRIVATE ${GA_SANITIZER_LINK_FLAGS})
  endif()
endfunction()
