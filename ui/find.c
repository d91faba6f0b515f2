/*
 * find: search on every screen. / types a query, n and N go to the next
 * and previous match; what an item is and which one is selected is each
 * screen's business (its find hook, over the one list cursor's
 * list_find), the query, the matching and the status line are here.
 */
#include "find.h"

#include "app.h"
#include "list.h"

#include <ctype.h>
#include <string.h>

int app_search_match(const app *a, const char *text)
{
    const char *q = a->search;
    size_t n = strlen(q);
    if (!n || !text) return 0;
    for (const char *s = text; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && tolower((unsigned char)s[i]) == tolower((unsigned char)q[i])) i++;
        if (i == n) return 1;
    }
    return 0;
}

int app_layer_matches(const app *a, int li)
{
    const layer *l = &plan_net(a->p)->layers[li];
    return app_search_match(a, l->name) || app_search_match(a, layer_type_name(l->type));
}

action app_find(app *a, int dir)
{
    const screen_ops *o = app_screens[a->screen];
    if (!a->search[0]) {
        app_set_status(a, 0, "no search yet: / types one");
        return ACT_REDRAW;
    }
    if (!o->find || (!plan_search_result(a->p) && !o->without_strategy)) {
        app_set_status(a, 1, "nothing to search on this screen");
        return ACT_REDRAW;
    }
    int nth = 0, n = o->find(a, dir, &nth);
    const char *what = o->find_what ? o->find_what : "item";
    if (!n) app_set_status(a, 1, "/%s: no %s matches", a->search, what);
    else
        app_set_status(a, 0, "/%s: %s %d of %d (n next, N previous)", a->search, what, nth, n);
    return ACT_REDRAW;
}
