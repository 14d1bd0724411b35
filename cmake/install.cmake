# `cmake --install <build> [--prefix P]`: what a user of the library gets, and how other builds find it.
#   include/hetccl/*.h                     the public headers (C API, RMA, agents, NCCL ABI)
#   lib/libhetccl.so*                      the library, with the GPU plugins beside it (the core loads
#   lib/libhetccl-{cuda,hip}.so            them from the directory it was loaded from: src/device/loader.cc)
#   lib/hetccl/dropin/libnccl.so.2, librccl.so (+ the plugins): the NCCL-ABI drop-ins, self-contained
#   bin/hetccl-run, hetccl-perf, hetccl-info (rpath $ORIGIN/../lib)
#   lib/cmake/hetccl/                      find_package(hetccl) -> imported target hetccl::hetccl
#   lib/pkgconfig/hetccl.pc                pkg-config --cflags --libs hetccl
# tests/install/check_install.sh installs a build this way and builds a C program against it both ways.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/hetccl DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(TARGETS hetccl EXPORT hetcclTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(hetccl_dropin_dest ${CMAKE_INSTALL_LIBDIR}/hetccl/dropin)
foreach(plugin hetccl-cuda hetccl-hip)
  if(TARGET ${plugin})
    install(TARGETS ${plugin} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
    install(FILES $<TARGET_FILE:${plugin}> DESTINATION ${hetccl_dropin_dest})
  endif()
endforeach()
foreach(dropin hetccl_nccl hetccl_rccl)
  if(TARGET ${dropin})
    install(TARGETS ${dropin} LIBRARY DESTINATION ${hetccl_dropin_dest})
  endif()
endforeach()

foreach(tool hetccl-run hetccl-perf hetccl-info)
  if(TARGET ${tool})
    set_target_properties(${tool} PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

set(hetccl_cmake_dest ${CMAKE_INSTALL_LIBDIR}/cmake/hetccl)
install(EXPORT hetcclTargets NAMESPACE hetccl:: DESTINATION ${hetccl_cmake_dest})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/hetcclConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/hetcclConfig.cmake INSTALL_DESTINATION ${hetccl_cmake_dest})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/hetcclConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/hetcclConfig.cmake ${PROJECT_BINARY_DIR}/hetcclConfigVersion.cmake
        DESTINATION ${hetccl_cmake_dest})

# Relocatable: the prefix is found from the .pc file's own directory (pkg-config's pcfiledir), so an
# install with `cmake --install --prefix P` works wherever P is.
file(RELATIVE_PATH hetccl_pc_to_prefix "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" hetccl_pc_to_prefix "${hetccl_pc_to_prefix}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/hetccl.pc.in ${PROJECT_BINARY_DIR}/hetccl.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/hetccl.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
