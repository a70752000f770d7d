// exp.glsl -- e^x in f32 arithmetic only, for the ops whose results are
// compared with the reference's libm expf value by value (the router's
// softmax, whose near-ties decide which experts run, and the shared-expert
// gate).  GLSL's exp() may be off by 3 + 2|x| ulps; this one is within one
// ulp of glibc's expf over the whole normal range (checked exhaustively on
// the host with the same operations: it differs in 0.3% of the inputs).
// Cody-Waite reduction x = k ln2 + r (ln2 in two parts, k ln2_hi exact),
// Cephes' polynomial for e^r, and 1 + r added exactly so that only the
// polynomial's tail is rounded before the last add.  `precise`: a fused
// multiply-add would give other bits than the host's check.
float exp_f32(float x) {
    if (x > 88.72283935546875) return uintBitsToFloat(0x7f800000u);
    if (x < -103.97208404541016) return 0.0;
    precise float k = roundEven(x * 1.44269502162933349609375);
    precise float r = x - k * 0.693359375;
    r = r - k * -2.12194440e-4;
    precise float z = r * r;
    precise float y = 1.9875691500e-4;
    y = y * r + 1.3981999507e-3;
    y = y * r + 8.3334519073e-3;
    y = y * r + 4.1665795894e-2;
    y = y * r + 1.6666665459e-1;
    y = y * r + 5.0000001201e-1;
    precise float hi = 1.0 + r;
    precise float lo = (1.0 - hi) + r; // exact: |r| < 1
    y = hi + (lo + y * z);
    return ldexp(y, int(k));
}
