// Helpers shared by the codec files of this target (not part of the module's interface).
#ifndef WI_INTERNAL_H
#define WI_INTERNAL_H
#include "wi_codecs.h"
int wi_buffer_append(wi_buffer *buffer, const uint8_t *data, size_t length);
void wi_set_message(char *message, const char *text);
#endif
