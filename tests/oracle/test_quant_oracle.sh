# test_quant_oracle.sh -- every quant format against llama.cpp itself:
#  decode   our to_float (every tier) == ggml's to_float, bit for bit, on
#           random, wild (all bytes random) and edge blocks, and on rows
#           llama.cpp quantized;
#  encode   our from_float bytes == ggml_quantize_chunk bytes on rows of
#           several lengths and distributions, without and with an imatrix
#           (the iq1/iq2 encodes are in test_quant_oracle_iq1/iq2.sh);
#  act      our activation encoder (every tier) == the CPU backend's from_float;
#  vec_dot  our reference == ggml's generic scalar kernel (libggml-cpu-x64),
#           bit for bit; our fastest tier == the CPU backend ggml picks here,
#           within the float-summation tolerance (pl_quant_tool cmp-dot) on
#           random rows, bit for bit on exact rows (power-of-two scales,
#           small integers: every summation order gives the same float).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/quant_cases.sh"
quant_run main
done_testing
