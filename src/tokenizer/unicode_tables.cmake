# unicode_tables.cmake -- included by the top-level CMakeLists.txt: generate
# the tokenizer's Unicode tables at build time from Debian's Unicode
# Character Database (package unicode-data) with Debian's python3, and
# compile them into the engine.
set(PL_UCD_DIR /usr/share/unicode CACHE PATH "Unicode Character Database (Debian package unicode-data)")
foreach(f UnicodeData.txt PropList.txt DerivedAge.txt)
  if(NOT EXISTS "${PL_UCD_DIR}/${f}")
    message(FATAL_ERROR "${PL_UCD_DIR}/${f} is missing: install the Debian package unicode-data "
                        "(scripts/install-deps.sh does)")
  endif()
endforeach()
find_program(PL_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT PL_PYTHON3)
  message(FATAL_ERROR "/usr/bin/python3 (Debian) is needed to generate the Unicode tables")
endif()
set(PL_UNICODE_TABLES ${CMAKE_BINARY_DIR}/generated/pl_unicode_tables.c)
set(PL_UNICODE_GEN ${CMAKE_SOURCE_DIR}/src/tokenizer/gen_unicode_tables.py)
set(PL_UNICODE_ADD ${CMAKE_SOURCE_DIR}/src/tokenizer/unicode-15.1-additions.txt)
add_custom_command(
  OUTPUT ${PL_UNICODE_TABLES}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/generated
  COMMAND ${PL_PYTHON3} ${PL_UNICODE_GEN} ${PL_UCD_DIR} ${PL_UNICODE_ADD} ${PL_UNICODE_TABLES}
  DEPENDS ${PL_UNICODE_GEN} ${PL_UNICODE_ADD} ${PL_UCD_DIR}/UnicodeData.txt ${PL_UCD_DIR}/PropList.txt
  COMMENT "Generating the Unicode tables from ${PL_UCD_DIR}"
  VERBATIM)
target_sources(pl_core PRIVATE ${PL_UNICODE_TABLES})
