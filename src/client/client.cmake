# inferd's C++ client library (HTTP on Boost.Beast, gRPC on the generated stubs) and its
# example program (build/inferd_client_example).
add_library(inferd_client STATIC
  ${CMAKE_CURRENT_LIST_DIR}/client.cc
  ${CMAKE_CURRENT_LIST_DIR}/grpc_client.cc
  ${CMAKE_CURRENT_LIST_DIR}/http_client.cc)
target_include_directories(inferd_client SYSTEM PUBLIC ${RAPIDJSON_INCLUDE_DIR})
target_link_libraries(inferd_client PUBLIC inferd_core inferd_grpc_proto Boost::headers)

add_executable(inferd_client_example ${CMAKE_CURRENT_LIST_DIR}/example_infer.cc)
target_include_directories(inferd_client_example SYSTEM PRIVATE ${CLI11_INCLUDE_DIR})
target_link_libraries(inferd_client_example PRIVATE inferd_client)
set_target_properties(inferd_client_example PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# build/inferd_latency_probe: concurrency-1 latency from the C++ client (bench/protocol_bench.py).
add_executable(inferd_latency_probe ${CMAKE_CURRENT_LIST_DIR}/latency_probe.cc)
target_include_directories(inferd_latency_probe SYSTEM PRIVATE ${CLI11_INCLUDE_DIR})
target_link_libraries(inferd_latency_probe PRIVATE inferd_client)
set_target_properties(inferd_latency_probe PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
