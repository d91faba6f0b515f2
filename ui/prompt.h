/*
 * prompt: the line typed on the status line (a GPU count, a file, a
 * search) and the yes/no question before overwriting a file. The one who
 * opens a prompt hands it what to do with the text (a->prompt.submit), so
 * the prompt calls back into no screen by name.
 */
#ifndef LW_PROMPT_H
#define LW_PROMPT_H

#include "app.h"

/* Opens a prompt: label, the text it starts with (NULL: empty), what Enter
 * does with the text and the arg handed to it. A PROMPT_OVERWRITE prompt is
 * a yes/no question: y submits the initial text, n, q or Esc call
 * a->prompt.decline (set it after opening; NULL: "cancelled"). */
void prompt_open(app *a, prompt_kind kind, const char *label, const char *initial, prompt_submit_fn submit, int arg);
/* A key while a prompt is open: edits it, submits it (Enter) or closes it
 * (Esc). */
action prompt_key(app *a, int key);
/* "~" and "~/x" are the home directory, "~user/x" that user's, as a shell
 * reads them; anything else is kept. 0, or -1 when the home is unknown or
 * the result does not fit. For prompts that take a path. */
int prompt_expand_home(const char *text, char *out, size_t n);

#endif
