# Post-processing pipeline ops (core/pipeline/pipeline_op.h): pure C++, depend on core only.
add_library(inferd_ops_post STATIC
  ${CMAKE_CURRENT_LIST_DIR}/labels_file.cc
  ${CMAKE_CURRENT_LIST_DIR}/post_op_base.cc
  ${CMAKE_CURRENT_LIST_DIR}/register_post_ops.cc
  ${CMAKE_CURRENT_LIST_DIR}/reshape_op.cc
  ${CMAKE_CURRENT_LIST_DIR}/softmax_op.cc
  ${CMAKE_CURRENT_LIST_DIR}/threshold_op.cc
  ${CMAKE_CURRENT_LIST_DIR}/top_k_op.cc)
target_link_libraries(inferd_ops_post PUBLIC inferd_core)
if(TARGET inferd)
  target_link_libraries(inferd PRIVATE inferd_ops_post)
endif()
if(INFERD_BUILD_TESTS)
  target_link_libraries(inferd_unit_tests PRIVATE inferd_ops_post)
endif()
