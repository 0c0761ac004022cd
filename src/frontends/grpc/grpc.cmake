# The gRPC frontend: stubs generated from proto/inference_service.proto with Debian's protoc
# and grpc_cpp_plugin, a library of them (shared with the C++ client), and the service.
set(INFERD_PROTO_DIR ${PROJECT_SOURCE_DIR}/proto)
set(INFERD_PROTO_OUT ${CMAKE_BINARY_DIR}/generated)
set(INFERD_PROTO_SRCS
  ${INFERD_PROTO_OUT}/inference_service.pb.cc
  ${INFERD_PROTO_OUT}/inference_service.grpc.pb.cc)
set(INFERD_PROTO_HDRS
  ${INFERD_PROTO_OUT}/inference_service.pb.h
  ${INFERD_PROTO_OUT}/inference_service.grpc.pb.h)
add_custom_command(
  OUTPUT ${INFERD_PROTO_SRCS} ${INFERD_PROTO_HDRS}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${INFERD_PROTO_OUT}
  COMMAND protobuf::protoc
    --proto_path=${INFERD_PROTO_DIR}
    --cpp_out=${INFERD_PROTO_OUT}
    --grpc_out=${INFERD_PROTO_OUT}
    --plugin=protoc-gen-grpc=${INFERD_GRPC_CPP_PLUGIN}
    ${INFERD_PROTO_DIR}/inference_service.proto
  DEPENDS ${INFERD_PROTO_DIR}/inference_service.proto
  COMMENT "Generating the gRPC stubs from proto/inference_service.proto")

# Generated code is not held to -Werror.
add_library(inferd_grpc_proto STATIC ${INFERD_PROTO_SRCS})
target_compile_options(inferd_grpc_proto PRIVATE -Wno-error)
target_include_directories(inferd_grpc_proto SYSTEM PUBLIC ${INFERD_PROTO_OUT})
target_link_libraries(inferd_grpc_proto PUBLIC gRPC::grpc++ protobuf::libprotobuf)

add_library(inferd_grpc STATIC
  ${CMAKE_CURRENT_LIST_DIR}/grpc_access.cc
  ${CMAKE_CURRENT_LIST_DIR}/grpc_generate_codec.cc
  ${CMAKE_CURRENT_LIST_DIR}/grpc_infer_codec.cc
  ${CMAKE_CURRENT_LIST_DIR}/grpc_inference.cc
  ${CMAKE_CURRENT_LIST_DIR}/grpc_model_info.cc
  ${CMAKE_CURRENT_LIST_DIR}/grpc_server.cc
  ${CMAKE_CURRENT_LIST_DIR}/grpc_service.cc
  ${CMAKE_CURRENT_LIST_DIR}/grpc_status.cc
  ${CMAKE_CURRENT_LIST_DIR}/grpc_stream_infer.cc)
target_link_libraries(inferd_grpc PUBLIC inferd_core inferd_auth inferd_observability inferd_shm
  inferd_grpc_proto PRIVATE simdjson::simdjson)

target_link_libraries(inferd PRIVATE inferd_grpc)
if(INFERD_BUILD_TESTS)
  target_link_libraries(inferd_unit_tests PRIVATE inferd_grpc)
endif()
