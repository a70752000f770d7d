/*
 * vk_tables.h -- where the IQ codebooks sit in the device's table buffer,
 * in 32-bit words.  Included by C (vk_device.c fills the buffer from
 * src/quant/iq_tables.c, the one copy of the grids) and by the shaders
 * (shaders/tables.glsl reads them), so both sides agree by construction.
 * 64-bit grid rows are two words, low word first.
 */
#ifndef PL_VK_TABLES_H
#define PL_VK_TABLES_H

#define PL_VK_TAB_IQ2XXS 0            /* 256 rows of 8 bytes */
#define PL_VK_TAB_IQ2XS 512           /* 512 rows of 8 bytes */
#define PL_VK_TAB_IQ2S 1536           /* 1024 rows of 8 bytes */
#define PL_VK_TAB_IQ3XXS 3584         /* 256 rows of 4 bytes */
#define PL_VK_TAB_IQ3S 3840           /* 512 rows of 4 bytes */
#define PL_VK_TAB_IQ1S 4352           /* 2048 rows of 8 signed bytes */
#define PL_VK_TAB_KVALUES_IQ4NL 8448  /* 16 values, one int per word */
#define PL_VK_TAB_KVALUES_MXFP4 8464  /* 16 values, one int per word */
#define PL_VK_TAB_WORDS 8480

#endif
