# test_serve_batch_kv.sh -- test_serve_batch.sh with packed KV caches: q8_0
# for K and V (flash attention turned on by it), a q5_1 K over a bf16 V
# without flash, and a q4_1 K over a q8_0 V.  Each sequence's rows sit in
# one shared cache at its own offset, and every greedy and seeded answer
# must still be the same alone and beside three others.
here=$(dirname "$0")
rc=0
PL_SERVE_ARGS="--kv q8_0" bash "$here/test_serve_batch.sh" || rc=1
# under the sanitizers (2 minutes a variant) the first one shows the memory
# use is clean; the other pairs are the same code with other kernels
[ "${PL_SANITIZE:-0}" = 1 ] && exit $rc
PL_SERVE_ARGS="-ctk q5_1 -ctv bf16 -fa off" bash "$here/test_serve_batch.sh" || rc=1
PL_SERVE_ARGS="-ctk q4_1 -ctv q8_0" bash "$here/test_serve_batch.sh" || rc=1
exit $rc
