/*
 * prompt: the status line's prompt (prompt.h).
 */
#include "prompt.h"

#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CTRL(c) ((c) & 0x1f)

void prompt_open(app *a, prompt_kind kind, const char *label, const char *initial, prompt_submit_fn submit, int arg)
{
    a->prompt.kind = kind;
    snprintf(a->prompt.label, sizeof a->prompt.label, "%s", label);
    snprintf(a->prompt.buf, sizeof a->prompt.buf, "%s", initial ? initial : "");
    a->prompt.len = (int)strlen(a->prompt.buf);
    /* a pre-filled number (a GPU count, a bandwidth) is there to be read
     * and replaced, as a selected field is: the first character typed
     * replaces it (16 then 48 gives 48, not 1648); a pre-filled path is
     * there to be completed, and is kept */
    a->prompt.fresh = a->prompt.len > 0 && strspn(a->prompt.buf, "0123456789.eE+-") == (size_t)a->prompt.len;
    a->prompt.arg = arg;
    a->prompt.submit = submit;
    a->prompt.decline = NULL;
}

int prompt_expand_home(const char *text, char *out, size_t n)
{
    if (text[0] != '~') return snprintf(out, n, "%s", text) < (int)n ? 0 : -1;
    const char *rest = strchr(text, '/');
    if (!rest) rest = text + strlen(text);
    const char *home = NULL;
    if (rest == text + 1) {
        home = getenv("HOME");
        if (!home || !*home) {
            struct passwd *pw = getpwuid(getuid());
            home = pw ? pw->pw_dir : NULL;
        }
    } else {
        char user[256];
        snprintf(user, sizeof user, "%.*s", (int)(rest - text - 1), text + 1);
        struct passwd *pw = getpwnam(user);
        home = pw ? pw->pw_dir : NULL;
    }
    if (!home) return -1;
    return snprintf(out, n, "%s%s", home, rest) < (int)n ? 0 : -1;
}

/* Closes the prompt and hands its text to the callback it was opened with. */
static action finish(app *a, prompt_submit_fn fn)
{
    char text[sizeof a->prompt.buf];
    snprintf(text, sizeof text, "%s", a->prompt.buf);
    int arg = a->prompt.arg;
    a->prompt.kind = PROMPT_NONE;
    return fn ? fn(a, text, arg) : ACT_REDRAW;
}

static action yes_no_key(app *a, int key)
{
    switch (key) {
    case 'y':
    case 'Y': return finish(a, a->prompt.submit);
    case 'n':
    case 'N':
    case 'q':
    case 'Q':
    case 27:
        if (a->prompt.decline) return finish(a, a->prompt.decline);
        a->prompt.kind = PROMPT_NONE;
        app_set_status(a, 0, "cancelled");
        return ACT_REDRAW;
    case KEY_RESIZE: return ACT_REDRAW;
    default: return ACT_NONE;
    }
}

action prompt_key(app *a, int key)
{
    if (a->prompt.kind == PROMPT_OVERWRITE) return yes_no_key(a, key);
    int fresh = a->prompt.fresh;
    if (key != KEY_RESIZE) a->prompt.fresh = 0; /* any edit keeps the text from then on */
    switch (key) {
    case 27:
        a->prompt.kind = PROMPT_NONE;
        app_set_status(a, 0, "cancelled");
        return ACT_REDRAW;
    case '\n':
    case '\r':
    case KEY_ENTER: return finish(a, a->prompt.submit);
    case KEY_BACKSPACE:
    case 127:
    case CTRL('h'):
        if (a->prompt.len > 0) {
            /* drop a whole UTF-8 sequence */
            do a->prompt.len--;
            while (a->prompt.len > 0 && ((unsigned char)a->prompt.buf[a->prompt.len] & 0xC0) == 0x80);
            a->prompt.buf[a->prompt.len] = 0;
        }
        return ACT_REDRAW;
    case CTRL('u'):
        a->prompt.len = 0;
        a->prompt.buf[0] = 0;
        return ACT_REDRAW;
    case KEY_RESIZE: return ACT_REDRAW;
    default:
        if (key >= 32 && key < 256 && key != 127 && a->prompt.len + 1 < (int)sizeof a->prompt.buf) {
            if (fresh) a->prompt.len = 0;
            a->prompt.buf[a->prompt.len++] = (char)key;
            a->prompt.buf[a->prompt.len] = 0;
            return ACT_REDRAW;
        }
        return ACT_NONE;
    }
}
