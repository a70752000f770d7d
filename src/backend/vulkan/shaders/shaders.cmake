# shaders.cmake -- compile every GLSL compute shader to SPIR-V with glslc
# and embed the results in the engine (vk_shaders.h).  Included by the top
# CMakeLists.txt when the Vulkan backend is built; sets PL_VK_EMBED_SOURCE
# to the generated C file.  Variants: one per float weight type and
# quantized weight type (each types/<name>.glsl makes get_rows_<name>,
# matvec_<name> and gemm_<name> with int8 dot products, and _nodot
# variants of both without),
# one per activation block type.
set(PL_VK_SHADER_DIR ${CMAKE_SOURCE_DIR}/src/backend/vulkan/shaders)
set(PL_VK_SPV_DIR ${CMAKE_BINARY_DIR}/vk_spv)
file(MAKE_DIRECTORY ${PL_VK_SPV_DIR})
set(PL_VK_SPV_FILES "")
set(PL_VK_SPV_NAMES "")

# pl_vk_shader(NAME SOURCE DEFINES...): NAME.spv from SOURCE.comp
function(pl_vk_shader name source)
  set(defs "")
  foreach(d ${ARGN})
    list(APPEND defs "-D${d}")
  endforeach()
  set(out ${PL_VK_SPV_DIR}/${name}.spv)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PL_VK_SPV_DIR}
    COMMAND ${PL_GLSLC} --target-env=vulkan1.2 -O -I${PL_VK_SHADER_DIR} ${defs}
            -MD -MF ${out}.d -o ${out} ${PL_VK_SHADER_DIR}/${source}.comp
    DEPENDS ${PL_VK_SHADER_DIR}/${source}.comp
    DEPFILE ${out}.d
    COMMENT "glslc ${name}"
    VERBATIM)
  set(PL_VK_SPV_FILES ${PL_VK_SPV_FILES} ${out} PARENT_SCOPE)
  set(PL_VK_SPV_NAMES ${PL_VK_SPV_NAMES} ${name} PARENT_SCOPE)
endfunction()

foreach(s elementwise rms_norm softmax rope kv_store kv_store_q argmax attention attention_tile layer_norm gelu moe_route moe_group
         gelu_erf im2col transpose)
  pl_vk_shader(${s} ${s})
endforeach()
foreach(t f32 f16 bf16)
  string(TOUPPER ${t} T)
  pl_vk_shader(get_rows_${t} get_rows_f PL_${T})
  pl_vk_shader(matvec_${t} matvec_f PL_${T})
  pl_vk_shader(gemm_${t} gemm_f PL_${T})
endforeach()
pl_vk_shader(round_act_f16 round_act PL_F16)
pl_vk_shader(round_act_bf16 round_act PL_BF16)
foreach(a q8_0 q8_1 q8_K)
  string(TOUPPER ${a} A)
  pl_vk_shader(quant_act_${a} quant_act ACT_${A})
endforeach()
file(GLOB PL_VK_TYPE_FILES CONFIGURE_DEPENDS ${PL_VK_SHADER_DIR}/types/*.glsl)
foreach(f ${PL_VK_TYPE_FILES})
  get_filename_component(t ${f} NAME_WE)
  string(TOUPPER ${t} T)
  pl_vk_shader(get_rows_${t} get_rows_q PL_TYPE_${T})
  pl_vk_shader(matvec_${t} matvec_q PL_TYPE_${T} PL_INT_DOT)
  pl_vk_shader(matvec_${t}_nodot matvec_q PL_TYPE_${T})
  pl_vk_shader(gemm_${t} gemm_q PL_TYPE_${T} PL_INT_DOT)
  pl_vk_shader(gemm_${t}_nodot gemm_q PL_TYPE_${T})
endforeach()

set(PL_VK_EMBED_SOURCE ${CMAKE_BINARY_DIR}/vk_shaders_embed.c)
add_custom_command(OUTPUT ${PL_VK_EMBED_SOURCE}
  COMMAND ${CMAKE_COMMAND} -DOUT=${PL_VK_EMBED_SOURCE} -DDIR=${PL_VK_SPV_DIR} "-DNAMES=${PL_VK_SPV_NAMES}"
          -P ${PL_VK_SHADER_DIR}/embed.cmake
  DEPENDS ${PL_VK_SPV_FILES} ${PL_VK_SHADER_DIR}/embed.cmake
  COMMENT "embedding the SPIR-V shaders"
  VERBATIM)
