# test_quant_oracle_iq2.sh -- iq2_xxs, iq2_xs and iq2_s encodes (with an
# imatrix: we refuse them without one) byte-equal to ggml_quantize_chunk,
# and llama.cpp's output decoded bit-equal by ours.  Most of its time is
# llama.cpp building its iq2 codebook search tables (about 23 s).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/quant_cases.sh"
quant_run iq2
done_testing
