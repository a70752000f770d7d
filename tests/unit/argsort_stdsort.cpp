// argsort_stdsort.cpp -- pl_ref_argsort_desc (src/ops/ref_moe.c) against
// libstdc++'s std::sort with ggml's descending comparator, the routine
// llama.cpp's CPU argsort runs to pick a router's top k.  std::sort is not
// stable: where probabilities tie exactly, which expert comes first is a
// property of its introsort, so the two orders must be the same index for
// index, on random arrays with heavy ties, every size 1..300, and an input
// that drives the introsort into its heapsort fallback.
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <random>
#include <vector>

extern "C" {
#include "ops/ref.h"
}

static int failures, checks;

static void compare(const std::vector<float> &x, const char *what) {
    const int64_t n = (int64_t)x.size();
    std::vector<int32_t> want(n), got(n);
    for (int64_t i = 0; i < n; i++) want[i] = (int32_t)i;
    std::sort(want.begin(), want.end(), [&x](int32_t a, int32_t b) { return x[a] > x[b]; });
    pl_ref_argsort_desc(x.data(), got.data(), n);
    checks++;
    if (want != got) {
        failures++;
        int64_t i = 0;
        while (want[i] == got[i]) i++;
        std::fprintf(stderr, "argsort_stdsort: %s, n %lld: index %lld is %d, std::sort says %d\n", what, (long long)n,
                     (long long)i, got[i], want[i]);
    }
}

int main() {
    std::mt19937 gen(1234);
    for (int n = 1; n <= 300; n++)
        for (int levels : {1, 2, 3, 7, 50, 1 << 20}) {
            // `levels` distinct values: 1 = all equal, 2..50 = heavy ties, 2^20 = nearly none
            std::uniform_int_distribution<int> pick(0, levels - 1);
            std::vector<float> x(n);
            for (auto &v : x) v = (float)pick(gen) / (float)levels;
            compare(x, "random with ties");
        }
    // sorted, reversed, organ pipe, with ties: the partition's edge cases
    for (int n : {17, 33, 64, 128, 129, 256}) {
        std::vector<float> up(n), down(n), pipe(n);
        for (int i = 0; i < n; i++) up[i] = (float)(i / 3), down[i] = (float)((n - i) / 3), pipe[i] = (float)std::min(i, n - i);
        compare(up, "ascending"), compare(down, "descending"), compare(pipe, "organ pipe");
    }
    // a median-of-3 killer (Musser's sequence for the pivot rule first+1 /
    // mid / last-1): the recursion goes past 2 log2 n and the heapsort
    // fallback runs; built by playing the partition against a lazy oracle
    for (int n : {64, 128, 256, 300}) {
        std::vector<int32_t> gas(n, -1), order(n);
        int next = 0;
        for (int i = 0; i < n; i++) order[i] = i;
        auto val = [&](int32_t i) {
            if (gas[i] < 0) gas[i] = n + next; // unresolved: "gas", larger than anything solid yet
            return gas[i];
        };
        // freeze values as a descending std::sort compares them
        std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
            if (gas[a] < 0 && gas[b] < 0) gas[a] = next++;
            else if (gas[a] < 0) gas[a] = next++;
            else if (gas[b] < 0) gas[b] = next++;
            return val(a) > val(b);
        });
        std::vector<float> x(n);
        for (int i = 0; i < n; i++) x[i] = (float)(gas[i] < 0 ? n + i : gas[i]);
        compare(x, "adversarial");
    }
    std::fprintf(stderr, "argsort_stdsort: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
