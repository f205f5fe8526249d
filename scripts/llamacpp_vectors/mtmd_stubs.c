/* Link-time stand-ins for the multimodal (mtmd) functions that tools/server/server-common.cpp
 * references from its image/audio helpers. render.cpp never sends media, so none is ever called;
 * each aborts if it were. C linkage: only the names matter to the linker. */
#include <stdlib.h>

#define STUB(name) void name(void) { abort(); }
STUB(mtmd_bitmap_free)
STUB(mtmd_helper_bitmap_init_from_buf)
STUB(mtmd_helper_video_free)
STUB(mtmd_input_chunk_copy)
STUB(mtmd_input_chunk_free)
STUB(mtmd_input_chunk_get_id)
STUB(mtmd_input_chunk_get_n_pos)
STUB(mtmd_input_chunk_get_n_tokens)
STUB(mtmd_input_chunk_get_placeholder)
STUB(mtmd_input_chunk_get_tokens_text)
STUB(mtmd_input_chunk_get_type)
STUB(mtmd_input_chunk_load)
STUB(mtmd_input_chunk_save)
STUB(mtmd_input_chunks_free)
STUB(mtmd_input_chunks_get)
STUB(mtmd_input_chunks_init)
STUB(mtmd_input_chunks_size)
STUB(mtmd_tokenize)
