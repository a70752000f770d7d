/*
 * pl_mtmd_audio_bench.cpp -- the audio timing verb of pl_mtmd (pl_mtmd.cpp
 * dispatches to it): libmtmd's way from an audio file to the tower's
 * embeddings, timed in the stages `pocketllm bench --audio`
 * (src/bench/bench_audio.c) times ours, so bench/compare --audio can set
 * them side by side:
 *
 *   pl_mtmd audio-bench TEXT.gguf MMPROJ.gguf AUDIO [-t N] [-r N] [--fa on|off]
 *       after one untimed round, N rounds (default 5), each timing
 *         decode_ms  mtmd_helper_bitmap_init_from_file (miniaudio's decode,
 *                    mix to mono and resample to 16 kHz),
 *         mel_ms     mtmd_tokenize of "<marker>" with that bitmap (the
 *                    qwen3a preprocessor: the log-mel windows, one audio
 *                    chunk each),
 *         encode_ms  mtmd_encode_chunk on every audio chunk (the tower);
 *       prints one JSON line: n_tokens, windows, seconds, the three
 *       medians, total_ms, *_runs_ms (every round) and total_runs_ms.
 *       Never used by a pass/fail test.
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "llama.h"
#include "mtmd-helper.h"
#include "mtmd.h"

#define PL_ORACLE_PROG "pl_mtmd"
#include "oracle_util.h"
#include "pl_mtmd_util.h"

int pl_mtmd_audio_bench(int argc, char **argv);

static void runs(const char *key, const std::vector<double> &v) {
    printf(", \"%s\": [", key);
    for (size_t i = 0; i < v.size(); i++) printf("%s%.4f", i ? ", " : "", v[i]);
    printf("]");
}

int pl_mtmd_audio_bench(int argc, char **argv) {
    if (argc < 5) die("usage: pl_mtmd audio-bench TEXT.gguf MMPROJ.gguf AUDIO [-t N] [-r N] [--fa on|off]");
    int threads = 2, reps = 5;
    bool fa = false;
    bench_args(argc, argv, &threads, &reps, &fa);
    init_backends();
    llama_model *text = load_text(argv[2]);
    mtmd_context *mc = load_mtmd(argv[3], text, threads, fa);
    if (!mtmd_support_audio(mc)) die("%s has no audio encoder", argv[3]);

    const std::string prompt = mtmd_default_marker();
    std::vector<double> dec, mel, enc, tot;
    size_t n_tok = 0, n_win = 0;
    double seconds = 0;
    /* round -1: untimed (pages the weights in, starts the threads) */
    for (int r = -1; r < reps; r++) {
        const double t0 = now_ms();
        mtmd_helper_bitmap_wrapper bw = mtmd_helper_bitmap_init_from_file(mc, argv[4], false, mtmd_helper_init_opt_default());
        if (!bw.bitmap || !mtmd_bitmap_is_audio(bw.bitmap)) die("libmtmd could not decode %s as audio", argv[4]);
        const mtmd_bitmap *bm = bw.bitmap;
        const double t1 = now_ms();
        mtmd_input_text in = {prompt.c_str(), prompt.size(), true, true};
        mtmd_input_chunks *chunks = mtmd_input_chunks_init();
        if (mtmd_tokenize(mc, chunks, &in, &bm, 1)) die("mtmd_tokenize failed");
        const double t2 = now_ms();
        n_tok = n_win = 0;
        for (size_t i = 0; i < mtmd_input_chunks_size(chunks); i++) {
            const mtmd_input_chunk *c = mtmd_input_chunks_get(chunks, i);
            if (mtmd_input_chunk_get_type(c) != MTMD_INPUT_CHUNK_TYPE_AUDIO) continue;
            if (mtmd_encode_chunk(mc, c)) die("mtmd_encode_chunk failed on chunk %zu", i);
            n_tok += mtmd_input_chunk_get_n_tokens(c);
            n_win++;
        }
        const double t3 = now_ms();
        if (!n_win) die("mtmd_tokenize gave no audio chunk");
        seconds = (double)(mtmd_bitmap_get_n_bytes(bm) / sizeof(float)) / (double)mtmd_get_audio_sample_rate(mc);
        if (r >= 0) {
            dec.push_back(t1 - t0);
            mel.push_back(t2 - t1);
            enc.push_back(t3 - t2);
            tot.push_back(t3 - t0);
        }
        mtmd_input_chunks_free(chunks);
        mtmd_bitmap_free(bw.bitmap);
    }
    printf("{\"engine\": \"libmtmd\", \"threads\": %d, \"flash_attn\": %s, \"n_tokens\": %zu, \"windows\": %zu, "
           "\"seconds\": %.4f, \"decode_ms\": %.4f, \"mel_ms\": %.4f, \"encode_ms\": %.4f, \"total_ms\": %.4f",
           threads, fa ? "true" : "false", n_tok, n_win, seconds, median(dec), median(mel), median(enc), median(tot));
    runs("decode_runs_ms", dec);
    runs("mel_runs_ms", mel);
    runs("encode_runs_ms", enc);
    runs("total_runs_ms", tot);
    printf("}\n");
    mtmd_free(mc);
    llama_model_free(text);
    return 0;
}
