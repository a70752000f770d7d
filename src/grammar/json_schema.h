/*
 * json_schema.h -- JSON Schema to GBNF (llama.cpp's grammar dialect), the
 * engine of OpenAI's response_format {"type":"json_schema"} and of
 * tool-call argument constraints.
 *
 * Every rule name of the result starts with the given prefix (so that the
 * grammars of several schemas can be concatenated into one), and the start
 * rule is "<prefix>root".  The text is the same for the same schema.
 *
 * Covered: type (and type arrays), properties / required /
 * additionalProperties, items / prefixItems / minItems / maxItems, enum,
 * const, anyOf, oneOf (as anyOf), allOf (merged exactly, else refused),
 * local $ref ("#", "#/$defs/..", "#/definitions/..", any "#/.." pointer;
 * recursion allowed), minLength / maxLength, pattern, format (date, time,
 * date-time, uuid, email), minimum / maximum / exclusiveMinimum /
 * exclusiveMaximum.  Annotations (title, description, examples, ...) are
 * ignored; any other keyword is refused with
 * "unsupported JSON-schema keyword 'K' at #/json/pointer".
 */
#ifndef PL_GRAMMAR_JSON_SCHEMA_H
#define PL_GRAMMAR_JSON_SCHEMA_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* GBNF for a schema: rules whose names all start with `prefix` ("" allowed),
   the start rule named "<prefix>root".  Returns malloc'd NUL-terminated
   text, or NULL with err filled (one line). */
char *pl_schema_to_gbnf(const cJSON *schema, const char *prefix, char *err, size_t errlen);

/* GBNF for any JSON object (response_format json_object), start rule
   "<prefix>root".  NULL only when the prefix is not made of [a-zA-Z0-9-]
   or memory ran out. */
char *pl_json_object_gbnf(const char *prefix);

#endif
