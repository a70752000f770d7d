# test_quant_oracle_iq1.sh -- iq1_s and iq1_m encodes (with an imatrix: we
# refuse them without one) byte-equal to ggml_quantize_chunk, and
# llama.cpp's output decoded bit-equal by ours.  Most of its time is
# llama.cpp building its iq1 codebook search tables (about 25 s).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/quant_cases.sh"
quant_run iq1
done_testing
