#!/usr/bin/env python3
"""Writes the 20-file site of bench/arena: the names and byte sizes of HttpArena's static
profile (data/static in github.com/MDA2AV/HttpArena), with content of our own.

    make-site.py DIR        writes DIR/static/<name> and prints "<path> <bytes>" a line

Text files (CSS, JS, HTML, SVG, JSON) are minified-looking code built from word lists by a
generator seeded with the file's name, so every run and machine gets the same bytes, and
they compress about as HttpArena's do (Brotli 11 keeps 8-30% of them). The fonts and images
are a valid-looking header followed by seeded random bytes: incompressible, as real woff2
and webp are. Precompressed siblings are written by bench/arena/run, not here.
"""
import os
import random
import struct
import sys

# name -> bytes, as in HttpArena's data/static (842 KB in all).
FILES = [
    ("reset.css", 8192), ("layout.css", 25600), ("theme.css", 18432),
    ("components.css", 204800), ("utilities.css", 61440),
    ("analytics.js", 12288), ("helpers.js", 22528), ("app.js", 204800),
    ("vendor.js", 307200), ("router.js", 35840),
    ("header.html", 122880), ("footer.html", 56320),
    ("regular.woff2", 18432), ("bold.woff2", 22528),
    ("logo.svg", 15344), ("icon-sprite.svg", 71680),
    ("hero.webp", 46080), ("thumb1.webp", 8192), ("thumb2.webp", 6144),
    ("manifest.json", 2883),
]

BLOCKS = ("card nav menu modal toast badge alert panel grid list table form field input "
          "select tabs tab tooltip popover avatar chip banner drawer dialog header footer "
          "sidebar hero toolbar pager stepper slider switch upload search filter").split()
PARTS = ("body title icon label item link group close toggle inner wrap text media "
         "actions footer header content overlay trigger").split()
STATES = ("active disabled open closed loading error success warning compact dense "
          "primary secondary ghost outline sm md lg xl").split()
PROPS = {
    "display": ["block", "flex", "grid", "inline-flex", "none", "inline-block"],
    "position": ["relative", "absolute", "sticky", "fixed"],
    "align-items": ["center", "flex-start", "flex-end", "stretch", "baseline"],
    "justify-content": ["center", "space-between", "flex-end", "flex-start"],
    "font-weight": ["400", "500", "600", "700"],
    "text-align": ["left", "center", "right"],
    "overflow": ["hidden", "auto", "visible"],
    "cursor": ["pointer", "default", "not-allowed"],
    "white-space": ["nowrap", "normal", "pre-wrap"],
}
LENGTH_PROPS = ("margin padding margin-top margin-bottom padding-left padding-right gap "
                "width height max-width min-height top left right bottom font-size "
                "line-height border-radius letter-spacing").split()
COLOR_PROPS = "color background-color border-color fill stroke outline-color".split()
COLORS = ("#0d6efd #6610f2 #6f42c1 #d63384 #dc3545 #fd7e14 #ffc107 #198754 #20c997 "
          "#0dcaf0 #212529 #343a40 #495057 #6c757d #adb5bd #dee2e6 #f8f9fa #fff #000 "
          "transparent currentColor var(--fg) var(--bg) var(--accent) var(--muted) "
          "var(--border) rgba(0,0,0,.125) rgba(255,255,255,.5)").split()
UNITS = ["px", "rem", "em", "%"]
MEDIA = ["@media (min-width:576px)", "@media (min-width:768px)", "@media (min-width:992px)",
         "@media (prefers-reduced-motion:reduce)", "@media (prefers-color-scheme:dark)"]
VERBS = ("get set has is can load save fetch parse format render update create remove "
         "handle on apply merge resolve reject emit bind build sync track flush read "
         "write open close start stop reset clear sort filter map find").split()
NOUNS = ("User Item List Data Config State Props Event Error Result Request Response "
         "Query Store Cache Stream Session Token Route Page View Panel Modal Form Input "
         "Value Label Message Metric Trace Span Node Tree Queue Timer Theme Layout").split()
WORDS = ("the a of and to in for on with by at from your our new more all about help "
         "account settings profile search results orders products service support team "
         "pricing features docs blog status careers privacy terms contact sign in out "
         "menu home dashboard reports billing messages notifications project").split()


def css(r, size):
    out = [":root{" + ";".join(f"--{n}:{r.choice(COLORS)}" for n in
                               ("fg", "bg", "accent", "muted", "border")) + "}"]
    n = 0
    while n < size:
        sel = "." + r.choice(BLOCKS)
        if r.random() < 0.6:
            sel += "__" + r.choice(PARTS)
        if r.random() < 0.4:
            sel += "--" + r.choice(STATES)
        if r.random() < 0.2:
            sel += r.choice([":hover", ":focus-visible", ":disabled", "::before", ":first-child"])
        decls = []
        for _ in range(r.randint(2, 6)):
            k = r.random()
            if k < 0.4:
                p = r.choice(list(PROPS))
                decls.append(f"{p}:{r.choice(PROPS[p])}")
            elif k < 0.8:
                decls.append(f"{r.choice(LENGTH_PROPS)}:{r.choice([0, .25, .5, .75, 1, 1.5, 2, 4, 8, 12, 16, 24, 32])}{r.choice(UNITS)}")
            else:
                decls.append(f"{r.choice(COLOR_PROPS)}:{r.choice(COLORS)}")
        rule = sel + "{" + ";".join(decls) + "}"
        if r.random() < 0.08:
            rule = r.choice(MEDIA) + "{" + rule + "}"
        out.append(rule)
        n += len(rule)
    return "".join(out)


def ident(r):
    return r.choice(VERBS) + r.choice(NOUNS) + (r.choice(NOUNS) if r.random() < 0.3 else "")


def js(r, size):
    out = ['"use strict";']
    n = 0
    while n < size:
        name, a, b = ident(r), r.choice("tenrio"), r.choice("sulcdf")
        body = r.choice([
            f"if(!{a})return null;const {b}={ident(r)}({a},{r.randint(0, 99)});return {b}.{r.choice(VERBS)}?{b}:{ident(r)}({b})",
            f"return {a}.map(({b})=>({{id:{b}.id,{r.choice(VERBS)}:{ident(r)}({b}.{r.choice(VERBS)})}})).filter(Boolean)",
            f"try{{await {ident(r)}({a});}}catch({b}){{console.error(\"{r.choice(WORDS)} {r.choice(WORDS)} failed\",{b});throw {b}}}",
            f"for(let {b}=0;{b}<{a}.length;{b}++){{{ident(r)}({a}[{b}],{r.randint(0, 9)})}}return {a}.length",
            f"const {b}=new URL(\"/api/{r.choice(WORDS)}/\"+{a},location.origin);return fetch({b},{{method:\"{r.choice(['GET', 'POST', 'PUT'])}\"}}).then(x=>x.json())",
        ])
        fn = f"{'async ' if 'await' in body else ''}function {name}({a}){{{body}}}"
        if r.random() < 0.5:  # hashes and ids of a bundle: what keeps real JS from compressing better
            fn += f"const {ident(r)}_{r.getrandbits(24):x}=\"{r.getrandbits(64):016x}\";"
        out.append(fn)
        n += len(fn)
    return "".join(out)


def html(r, size):
    head = ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
            'content="width=device-width,initial-scale=1"><title>Dashboard</title>'
            '<link rel="stylesheet" href="/static/components.css"></head><body>')
    out, n = [head], len(head)
    while n < size:
        block = r.choice(BLOCKS)
        items = "".join(
            f'<li class="{block}__item"><a class="{block}__link" href="/{r.choice(WORDS)}/{r.randint(1, 400)}">'
            f'{r.choice(WORDS).capitalize()} {r.choice(WORDS)}</a></li>' for _ in range(r.randint(3, 8)))
        part = (f'<section class="{block} {block}--{r.choice(STATES)}"><h2 class="{block}__title">'
                f'{" ".join(r.choice(WORDS) for _ in range(3)).capitalize()}</h2><ul class="{block}__list">'
                f'{items}</ul></section>')
        out.append(part)
        n += len(part)
    return "".join(out)


def svg(r, size):
    out = ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">']
    n = 0
    while n < size:
        d = "M" + " ".join(f"{r.randint(0, 24)}.{r.randint(0, 99)} {r.randint(0, 24)}.{r.randint(0, 99)}"
                           + r.choice(["L", "C", "Z", "l", "c", "H", "V"]) for _ in range(r.randint(4, 12)))
        sym = (f'<symbol id="icon-{r.choice(BLOCKS)}-{r.choice(PARTS)}" viewBox="0 0 24 24">'
               f'<path fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" d="{d}"/></symbol>')
        out.append(sym)
        n += len(sym)
    return "".join(out)


def json_manifest(r, size):
    icons = ",".join(f'{{"src":"/static/icon-{s}.png","sizes":"{s}x{s}","type":"image/png"}}'
                     for s in (48, 72, 96, 128, 144, 152, 192, 384, 512))
    text = (f'{{"name":"Dashboard","short_name":"Dash","start_url":"/","display":"standalone",'
            f'"background_color":"#ffffff","theme_color":"#0d6efd","icons":[{icons}],"shortcuts":[')
    while len(text) < size:
        text += (f'{{"name":"{r.choice(WORDS).capitalize()} {r.choice(WORDS)}","url":"/{r.choice(WORDS)}",'
                 f'"description":"{" ".join(r.choice(WORDS) for _ in range(6))}"}},')
    return text


def binary(r, name, size):
    if name.endswith(".webp"):  # RIFF container, VP8 chunk
        head = b"RIFF" + struct.pack("<I", size - 8) + b"WEBPVP8 " + struct.pack("<I", size - 20)
    else:                        # woff2 header: signature, flavor, length
        head = b"wOF2" + b"\x00\x01\x00\x00" + struct.pack(">I", size)
    return head + r.randbytes(size - len(head))


def fit(text, size):
    """Cut or pad (with spaces) to exactly size bytes; every generator writes ASCII."""
    data = text.encode("ascii")[:size]
    return data + b" " * (size - len(data))


def main():
    root = os.path.join(sys.argv[1], "static")
    os.makedirs(root, exist_ok=True)
    makers = {".css": css, ".js": js, ".html": html, ".svg": svg, ".json": json_manifest}
    for name, size in FILES:
        r = random.Random("bench/arena " + name)
        ext = os.path.splitext(name)[1]
        data = fit(makers[ext](r, size), size) if ext in makers else binary(r, name, size)
        with open(os.path.join(root, name), "wb") as f:
            f.write(data)
        print(f"/static/{name} {size}")


if __name__ == "__main__":
    main()
