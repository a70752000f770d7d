/*
 * pl_audio_encode.c -- writes test audio in formats sox cannot (Debian's
 * sox has no MP3 writer), with libsndfile 1.2's own encoders (MP3 through
 * LAME):
 *
 *   pl_audio_encode IN OUT mp3|flac|ogg|opus|wav
 *
 * reads IN (any format libsndfile reads) and writes OUT at the same rate
 * and channels.  Exit 0 on success, 2 on any failure (message on stderr),
 * and 2 in a build without the decoders (PL_AUDIO_DECODE=OFF).
 */
#include <stdio.h>
#include <string.h>

#ifdef PL_HAVE_AUDIO_DECODE
#include <sndfile.h>

static int fail(const char *what, const char *msg) {
    fprintf(stderr, "pl_audio_encode: %s: %s\n", what, msg);
    return 2;
}

int main(int argc, char **argv) {
    if (argc != 4) return fail("usage", "pl_audio_encode IN OUT mp3|flac|ogg|opus|wav");
    int format;
    if (!strcmp(argv[3], "mp3")) format = SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III;
    else if (!strcmp(argv[3], "flac")) format = SF_FORMAT_FLAC | SF_FORMAT_PCM_16;
    else if (!strcmp(argv[3], "ogg")) format = SF_FORMAT_OGG | SF_FORMAT_VORBIS;
    else if (!strcmp(argv[3], "opus")) format = SF_FORMAT_OGG | SF_FORMAT_OPUS;
    else if (!strcmp(argv[3], "wav")) format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
    else return fail("unknown format", argv[3]);
    SF_INFO in_info = {0};
    SNDFILE *in = sf_open(argv[1], SFM_READ, &in_info);
    if (!in) return fail(argv[1], sf_strerror(NULL));
    SF_INFO out_info = {0};
    out_info.samplerate = in_info.samplerate;
    out_info.channels = in_info.channels;
    out_info.format = format;
    SNDFILE *out = sf_open(argv[2], SFM_WRITE, &out_info);
    if (!out) {
        sf_close(in);
        return fail(argv[2], sf_strerror(NULL));
    }
    float buf[4096 * 8];
    const sf_count_t block = (sf_count_t)(sizeof buf / sizeof buf[0]) / in_info.channels;
    sf_count_t k;
    int rc = 0;
    while ((k = sf_readf_float(in, buf, block)) > 0)
        if (sf_writef_float(out, buf, k) != k) {
            rc = fail(argv[2], sf_strerror(out));
            break;
        }
    sf_close(in);
    if (sf_close(out) != 0 && !rc) rc = fail(argv[2], "close failed");
    return rc;
}
#else
int main(void) {
    fprintf(stderr, "pl_audio_encode: this build has no audio decoders (built with PL_AUDIO_DECODE=OFF)\n");
    return 2;
}
#endif
