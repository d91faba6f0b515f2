#!/usr/bin/env python3
"""Render a terminal capture (tmux capture-pane -e -p: text with ANSI SGR
escapes) to a PNG, the way a terminal would draw it.

    render_screen.py CAPTURE.ans OUT.png [--cols N] [--rows N] [--title TEXT]

Needs Pillow (Debian: python3-pil) and DejaVu Sans Mono (fonts-dejavu-core).
Box-drawing and block characters are drawn as shapes rather than taken from
the font, so lines join across cells as they do in a real terminal.
"""
import argparse
import re
import sys

from PIL import Image, ImageDraw, ImageFont

FONT_DIR = "/usr/share/fonts/truetype/dejavu/"
FONT_SIZE = 15
PAD = 14
TITLE_H = 30

# A dark palette (xterm order: black red green yellow blue magenta cyan white).
BG = (28, 30, 38)
FG = (214, 218, 226)
NORMAL = [(40, 42, 54), (224, 88, 88), (126, 200, 120), (230, 196, 100),
          (98, 146, 230), (200, 120, 220), (90, 200, 210), (200, 204, 212)]
BRIGHT = [(96, 100, 116), (255, 120, 120), (160, 232, 150), (255, 224, 130),
          (140, 180, 255), (230, 160, 250), (130, 230, 240), (250, 250, 252)]

SGR = re.compile(r"\x1b\[([0-9;]*)m")


def xterm256(n):
    if n < 8:
        return NORMAL[n]
    if n < 16:
        return BRIGHT[n - 8]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    v = 8 + (n - 232) * 10
    return (v, v, v)


class Cell:
    __slots__ = ("ch", "fg", "bg", "bold", "dim", "under", "rev")

    def __init__(self, ch=" ", st=None):
        self.ch = ch
        st = st or {}
        self.fg = st.get("fg")
        self.bg = st.get("bg")
        self.bold = st.get("bold", False)
        self.dim = st.get("dim", False)
        self.under = st.get("under", False)
        self.rev = st.get("rev", False)


def apply_sgr(st, params):
    codes = [int(p) if p else 0 for p in params.split(";")] if params else [0]
    i = 0
    while i < len(codes):
        c = codes[i]
        if c == 0:
            st.clear()
        elif c == 1:
            st["bold"] = True
        elif c == 2:
            st["dim"] = True
        elif c == 4:
            st["under"] = True
        elif c == 7:
            st["rev"] = True
        elif c == 22:
            st["bold"] = st["dim"] = False
        elif c == 24:
            st["under"] = False
        elif c == 27:
            st["rev"] = False
        elif 30 <= c <= 37:
            st["fg"] = NORMAL[c - 30]
        elif c == 39:
            st.pop("fg", None)
        elif 40 <= c <= 47:
            st["bg"] = NORMAL[c - 40]
        elif c == 49:
            st.pop("bg", None)
        elif 90 <= c <= 97:
            st["fg"] = BRIGHT[c - 90]
        elif 100 <= c <= 107:
            st["bg"] = BRIGHT[c - 100]
        elif c in (38, 48) and i + 1 < len(codes):
            key = "fg" if c == 38 else "bg"
            if codes[i + 1] == 5 and i + 2 < len(codes):
                st[key] = xterm256(codes[i + 2])
                i += 2
            elif codes[i + 1] == 2 and i + 4 < len(codes):
                st[key] = tuple(codes[i + 2:i + 5])
                i += 4
        i += 1


def parse(text, cols, rows):
    grid = [[Cell() for _ in range(cols)] for _ in range(rows)]
    for y, line in enumerate(text.split("\n")[:rows]):
        st = {}
        x = 0
        pos = 0
        for m in SGR.finditer(line):
            for ch in line[pos:m.start()]:
                if x < cols and ch != "\x1b":
                    grid[y][x] = Cell(ch, st)
                    x += 1
            apply_sgr(st, m.group(1))
            pos = m.end()
        for ch in line[pos:]:
            if x < cols and ch != "\x1b":
                grid[y][x] = Cell(ch, st)
                x += 1
        # tmux drops trailing blanks: a line's background runs on to the edge
        # only when it was set; keep blank cells default
    return grid


# Box drawing: which sides each character connects (up, down, left, right).
BOX = {
    "─": "lr", "│": "ud", "┌": "dr", "┐": "dl", "└": "ur", "┘": "ul",
    "├": "udr", "┤": "udl", "┬": "dlr", "┴": "ulr", "┼": "udlr",
    "╵": "u", "╷": "d", "╴": "l", "╶": "r",
}


def colours(c):
    fg = c.fg or FG
    bg = c.bg or BG
    if c.bold and c.fg in NORMAL:
        fg = BRIGHT[NORMAL.index(c.fg)]
    if c.rev:
        fg, bg = bg, fg
    if c.dim:
        fg = tuple((a * 3 + b * 2) // 5 for a, b in zip(fg, bg))
    return fg, bg


def render(grid, out, title):
    regular = ImageFont.truetype(FONT_DIR + "DejaVuSansMono.ttf", FONT_SIZE)
    bold = ImageFont.truetype(FONT_DIR + "DejaVuSansMono-Bold.ttf", FONT_SIZE)
    fallback = ImageFont.truetype(FONT_DIR + "DejaVuSans.ttf", FONT_SIZE)
    cw = round(regular.getlength("M"))
    asc, desc = regular.getmetrics()
    ch_h = asc + desc + 3
    rows, cols = len(grid), len(grid[0])
    top = PAD + (TITLE_H if title else 0)
    img = Image.new("RGB", (cols * cw + 2 * PAD, rows * ch_h + top + PAD), BG)
    d = ImageDraw.Draw(img)
    if title:
        # a window title bar, so the picture reads as a terminal
        d.rectangle([0, 0, img.width, TITLE_H], fill=(44, 46, 58))
        for i, col in enumerate([(236, 95, 88), (240, 190, 70), (90, 196, 90)]):
            cx = PAD + 8 + i * 20
            d.ellipse([cx - 6, TITLE_H // 2 - 6, cx + 6, TITLE_H // 2 + 6], fill=col)
        tw = regular.getlength(title)
        d.text(((img.width - tw) / 2, (TITLE_H - asc) / 2 - 1), title, font=regular, fill=(170, 175, 190))
    lw = max(1, FONT_SIZE // 10)
    for y, line in enumerate(grid):
        for x, c in enumerate(line):
            fg, bg = colours(c)
            x0, y0 = PAD + x * cw, top + y * ch_h
            x1, y1 = x0 + cw, y0 + ch_h
            if bg != BG:
                d.rectangle([x0, y0, x1 - 1, y1 - 1], fill=bg)
            ch = c.ch
            mx, my = x0 + cw // 2, y0 + ch_h // 2
            if ch in BOX:
                sides = BOX[ch]
                if "l" in sides:
                    d.rectangle([x0, my - lw // 2, mx, my - lw // 2 + lw - 1], fill=fg)
                if "r" in sides:
                    d.rectangle([mx, my - lw // 2, x1 - 1, my - lw // 2 + lw - 1], fill=fg)
                if "u" in sides:
                    d.rectangle([mx - lw // 2, y0, mx - lw // 2 + lw - 1, my], fill=fg)
                if "d" in sides:
                    d.rectangle([mx - lw // 2, my, mx - lw // 2 + lw - 1, y1 - 1], fill=fg)
            elif "\u2581" <= ch <= "\u2588":  # lower eighths .. full block
                n = ord(ch) - 0x2580
                d.rectangle([x0, y1 - ch_h * n // 8, x1 - 1, y1 - 1], fill=fg)
            elif ch in "░▒▓":
                # shades as a blend, not the font's dither
                k = {"░": 0.25, "▒": 0.5, "▓": 0.75}[ch]
                col = tuple(int(b + (f - b) * k) for f, b in zip(fg, bg))
                d.rectangle([x0, y0, x1 - 1, y1 - 1], fill=col)
            elif ch != " ":
                font = bold if c.bold else regular
                if ch in "★■□▼→←…·×−":
                    font = fallback if ch == "★" else font
                d.text((x0, y0 + 1), ch, font=font, fill=fg)
            if c.under:
                d.line([x0, y1 - 2, x1 - 1, y1 - 2], fill=fg)
    img.save(out, optimize=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("capture")
    ap.add_argument("out")
    ap.add_argument("--cols", type=int, default=120)
    ap.add_argument("--rows", type=int, default=36)
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    with open(a.capture, encoding="utf-8", errors="replace") as f:
        text = f.read()
    render(parse(text, a.cols, a.rows), a.out, a.title)
    return 0


if __name__ == "__main__":
    sys.exit(main())
