// types.glsl -- the block decode of one quantized weight type, chosen by
// the build's -DPL_TYPE_<name>.  Each types/<name>.glsl defines
//   QK, QB      elements and bytes per block
//   ACT_Q8_0 / ACT_Q8_1 / ACT_Q8_K   the activation type of its dot product
//                (the reference's vec_dot_type)
//   void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m)
// which decodes elements [32u, 32u + 32) of the block at byte offset boff
// of w into signed 8-bit integers q (four per word, the lowest element in
// the lowest byte) and per-16-element scales s and offsets m such that
// element k is s * q[k] - m (x for the first 16, y for the second),
// computed in the same float operations as the reference decode, so that
// s * q - m is its value bit for bit.  tab is the codebook buffer
// (vk_tables.h).
#include "../vk_tables.h"

// unsigned 8-bit values of a packed word minus 0..255 bias: per byte
// (b - k) mod 256 for bytes b < 128 + k (no borrow between bytes)
uint sub_bytes(uint w, uint k) { return ((w + 0x80808080u - k * 0x01010101u) ^ 0x80808080u); }

#include "type_helpers.glsl"

#if defined(PL_TYPE_Q4_0)
#include "types/q4_0.glsl"
#elif defined(PL_TYPE_Q4_1)
#include "types/q4_1.glsl"
#elif defined(PL_TYPE_Q5_0)
#include "types/q5_0.glsl"
#elif defined(PL_TYPE_Q5_1)
#include "types/q5_1.glsl"
#elif defined(PL_TYPE_Q8_0)
#include "types/q8_0.glsl"
#elif defined(PL_TYPE_MXFP4)
#include "types/mxfp4.glsl"
#elif defined(PL_TYPE_Q2_K)
#include "types/q2_K.glsl"
#elif defined(PL_TYPE_Q3_K)
#include "types/q3_K.glsl"
#elif defined(PL_TYPE_Q4_K)
#include "types/q4_K.glsl"
#elif defined(PL_TYPE_Q5_K)
#include "types/q5_K.glsl"
#elif defined(PL_TYPE_Q6_K)
#include "types/q6_K.glsl"
#elif defined(PL_TYPE_IQ1_S)
#include "types/iq1_s.glsl"
#elif defined(PL_TYPE_IQ1_M)
#include "types/iq1_m.glsl"
#elif defined(PL_TYPE_IQ2_XXS)
#include "types/iq2_xxs.glsl"
#elif defined(PL_TYPE_IQ2_XS)
#include "types/iq2_xs.glsl"
#elif defined(PL_TYPE_IQ2_S)
#include "types/iq2_s.glsl"
#elif defined(PL_TYPE_IQ3_XXS)
#include "types/iq3_xxs.glsl"
#elif defined(PL_TYPE_IQ3_S)
#include "types/iq3_s.glsl"
#elif defined(PL_TYPE_IQ4_NL)
#include "types/iq4_nl.glsl"
#elif defined(PL_TYPE_IQ4_XS)
#include "types/iq4_xs.glsl"
#elif defined(PL_TYPE_TQ1_0)
#include "types/tq1_0.glsl"
#elif defined(PL_TYPE_TQ2_0)
#include "types/tq2_0.glsl"
#else
#error "types.glsl: no weight type"
#endif
