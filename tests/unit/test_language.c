/* The language table: lookup by name and alias, extension inference,
 * iteration, availability. */
#include "runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <execbox/language.h>

static const char *name_of(const eb_language *lang) {
  return lang != NULL ? eb_language_name(lang) : "(null)";
}

static void test_find_by_name(void **state) {
  const char *names[] = {"python", "javascript", "bash", "sh", "c"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    const eb_language *lang = eb_language_find(names[i]);
    assert_non_null(lang);
    assert_string_equal(eb_language_name(lang), names[i]);
  }
}

static void test_find_by_alias(void **state) {
  struct {
    const char *alias, *name;
  } cases[] = {
      {"py", "python"},  {"python3", "python"}, {"js", "javascript"}, {"node", "javascript"},
      {"nodejs", "javascript"}, {"shell", "bash"}, {"cc", "c"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    assert_string_equal(name_of(eb_language_find(cases[i].alias)), cases[i].name);
}

static void test_find_case_insensitive(void **state) {
  assert_string_equal(name_of(eb_language_find("PYTHON")), "python");
  assert_string_equal(name_of(eb_language_find("Py")), "python");
  assert_string_equal(name_of(eb_language_find("JS")), "javascript");
  assert_string_equal(name_of(eb_language_find("Node")), "javascript");
  assert_string_equal(name_of(eb_language_find("SHELL")), "bash");
  assert_string_equal(name_of(eb_language_find("Sh")), "sh");
  assert_string_equal(name_of(eb_language_find("C")), "c");
}

static void test_find_unknown(void **state) {
  assert_null(eb_language_find("cobol"));
  assert_null(eb_language_find(""));
  assert_null(eb_language_find(NULL));
  assert_null(eb_language_find("pyt"));       /* no prefix matching */
  assert_null(eb_language_find("python3 "));  /* no trimming */
  assert_null(eb_language_find(".py"));       /* extensions are not names */
}

static void test_for_path(void **state) {
  assert_string_equal(name_of(eb_language_for_path("x.py")), "python");
  assert_string_equal(name_of(eb_language_for_path("dir/y.JS")), "javascript");
  assert_string_equal(name_of(eb_language_for_path("/abs/path/z.mjs")), "javascript");
  assert_string_equal(name_of(eb_language_for_path("run.sh")), "sh");
  assert_string_equal(name_of(eb_language_for_path("run.bash")), "bash");
  assert_string_equal(name_of(eb_language_for_path("main.c")), "c");
  assert_string_equal(name_of(eb_language_for_path("archive.tar.py")), "python");
  assert_string_equal(name_of(eb_language_for_path("dir.py/main.c")), "c");
}

static void test_for_path_none(void **state) {
  assert_null(eb_language_for_path(".bashrc"));    /* a dot file has no extension */
  assert_null(eb_language_for_path("dir/.py"));
  assert_null(eb_language_for_path("Makefile"));   /* no extension */
  assert_null(eb_language_for_path("dir.py/noext"));
  assert_null(eb_language_for_path("x."));
  assert_null(eb_language_for_path("x.txt"));
  assert_null(eb_language_for_path(""));
  assert_null(eb_language_for_path(NULL));
}

static int contains(const char *const *list, const char *s) {
  for (; *list != NULL; list++)
    if (strcmp(*list, s) == 0)
      return 1;
  return 0;
}

static void test_table_iteration(void **state) {
  size_t n = eb_language_count();
  assert_true(n >= 5);
  int seen_python = 0, seen_c = 0;
  for (size_t i = 0; i < n; i++) {
    const eb_language *lang = eb_language_at(i);
    assert_non_null(lang);
    const char *name = eb_language_name(lang);
    assert_non_null(name);
    /* Every entry is found by its own name, aliases and extensions. */
    assert_ptr_equal(eb_language_find(name), lang);
    const char *const *aliases = eb_language_aliases(lang);
    assert_non_null(aliases);
    for (const char *const *a = aliases; *a != NULL; a++)
      assert_ptr_equal(eb_language_find(*a), lang);
    const char *const *exts = eb_language_extensions(lang);
    assert_non_null(exts);
    assert_non_null(exts[0]);
    for (const char *const *e = exts; *e != NULL; e++) {
      assert_int_equal((*e)[0], '.');
      char path[64];
      snprintf(path, sizeof(path), "file%s", *e);
      assert_ptr_equal(eb_language_for_path(path), lang);
    }
    assert_non_null(eb_language_file_name(lang));
    /* Names are unique. */
    for (size_t j = 0; j < i; j++)
      assert_string_not_equal(eb_language_name(eb_language_at(j)), name);
    if (strcmp(name, "python") == 0) {
      seen_python = 1;
      assert_true(contains(aliases, "py"));
      assert_true(contains(exts, ".py"));
      assert_false(eb_language_is_compiled(lang));
      assert_string_equal(eb_language_file_name(lang), "main.py");
    }
    if (strcmp(name, "c") == 0) {
      seen_c = 1;
      assert_true(eb_language_is_compiled(lang));
    }
  }
  assert_true(seen_python && seen_c);
  assert_null(eb_language_at(n));
  assert_null(eb_language_at((size_t)-1));
}

static void test_available_sh(void **state) {
  const eb_language *sh = eb_language_find("sh");
  assert_non_null(sh);
  char *why = NULL;
  assert_true(eb_language_available(sh, &why));
  assert_null(why);
  assert_true(eb_language_available(sh, NULL));
}

static void test_available_reports_why(void **state) {
  /* Whatever the host has, an unavailable language explains itself and an
   * available one leaves why alone. */
  for (size_t i = 0; i < eb_language_count(); i++) {
    char *why = NULL;
    bool ok = eb_language_available(eb_language_at(i), &why);
    if (ok) {
      assert_null(why);
    } else {
      assert_non_null(why);
      assert_non_null(strstr(why, "not found"));
      free(why);
    }
  }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_find_by_name),
    cmocka_unit_test(test_find_by_alias),
    cmocka_unit_test(test_find_case_insensitive),
    cmocka_unit_test(test_find_unknown),
    cmocka_unit_test(test_for_path),
    cmocka_unit_test(test_for_path_none),
    cmocka_unit_test(test_table_iteration),
    cmocka_unit_test(test_available_sh),
    cmocka_unit_test(test_available_reports_why),
};

EB_TEST_MAIN(tests)
