# The build-time check of src/transport/ucx/ucp_api.hpp against the real UCX headers (where they exist:
# Debian's libucx-dev, installed by scripts/install-deps.sh): ucp_api_check.cxx is compiled, syntax only,
# before hetccl_transport; a declaration that differs from <ucp/api/ucp.h> fails the build. Nothing links
# UCX: the transport opens libucp.so.0 at run time.
find_path(HETCCL_UCX_INCLUDE_DIR ucp/api/ucp.h)
if(HETCCL_UCX_INCLUDE_DIR)
  set(ucx_src ${PROJECT_SOURCE_DIR}/src/transport/ucx)
  set(ucx_inc "")
  if(NOT HETCCL_UCX_INCLUDE_DIR STREQUAL "/usr/include")  # -isystem /usr/include breaks <cstdlib>'s include_next
    set(ucx_inc -isystem ${HETCCL_UCX_INCLUDE_DIR})
  endif()
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/ucp_api_check.stamp
    COMMAND ${CMAKE_CXX_COMPILER} -std=c++20 -fsyntax-only -I${PROJECT_SOURCE_DIR}/src ${ucx_inc}
            ${ucx_src}/ucp_api_check.cxx
    COMMAND ${CMAKE_COMMAND} -E touch ${CMAKE_BINARY_DIR}/ucp_api_check.stamp
    DEPENDS ${ucx_src}/ucp_api_check.cxx ${ucx_src}/ucp_api.hpp
    COMMENT "Checking src/transport/ucx/ucp_api.hpp against ${HETCCL_UCX_INCLUDE_DIR}/ucp"
    VERBATIM)
  add_custom_target(hetccl_ucp_api_check DEPENDS ${CMAKE_BINARY_DIR}/ucp_api_check.stamp)
  add_dependencies(hetccl_transport hetccl_ucp_api_check)
else()
  message(STATUS "UCX headers (ucp/api/ucp.h) not found: src/transport/ucx/ucp_api.hpp is not checked against them")
endif()
