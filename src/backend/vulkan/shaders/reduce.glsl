// reduce.glsl -- sums and maxima over a whole work group: within each
// subgroup first (its size is whatever the device has), then across the
// subgroups through shared memory.  Every invocation must call these
// (they contain barriers).
shared float red_sh[128];

float wg_sum(float v) {
    v = subgroupAdd(v);
    if (subgroupElect()) red_sh[gl_SubgroupID] = v;
    barrier();
    float r = 0.0;
    for (uint i = 0u; i < gl_NumSubgroups; i++) r += red_sh[i];
    barrier();
    return r;
}

float wg_max(float v) {
    v = subgroupMax(v);
    if (subgroupElect()) red_sh[gl_SubgroupID] = v;
    barrier();
    float r = red_sh[0];
    for (uint i = 1u; i < gl_NumSubgroups; i++) r = max(r, red_sh[i]);
    barrier();
    return r;
}
