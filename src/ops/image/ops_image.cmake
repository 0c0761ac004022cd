# Image ops (ops/image): JPEG through TurboJPEG, PNG through libspng, WebP through libwebp
# (Debian's packages), and Pillow's resampling reproduced in C++. Depends on core only.
pkg_check_modules(INFERD_IMAGE_LIBS REQUIRED IMPORTED_TARGET libturbojpeg spng libwebp)
add_library(inferd_ops_image STATIC
  ${CMAKE_CURRENT_LIST_DIR}/image_decoder.cc
  ${CMAKE_CURRENT_LIST_DIR}/image_to_tensor_op.cc
  ${CMAKE_CURRENT_LIST_DIR}/pil_resample.cc
  ${CMAKE_CURRENT_LIST_DIR}/pixel_ops.cc
  ${CMAKE_CURRENT_LIST_DIR}/register_image_ops.cc)
target_link_libraries(inferd_ops_image PUBLIC inferd_core PRIVATE PkgConfig::INFERD_IMAGE_LIBS)
# ToTensor and Normalize are float32 division and subtraction in torchvision's order; a fused
# multiply-add would round differently from PyTorch.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/image_to_tensor_op.cc
  PROPERTIES COMPILE_OPTIONS -ffp-contract=off)
if(TARGET inferd)
  target_link_libraries(inferd PRIVATE inferd_ops_image)
endif()
if(INFERD_BUILD_TESTS)
  target_link_libraries(inferd_unit_tests PRIVATE inferd_ops_image)
endif()
