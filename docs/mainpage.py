#!/usr/bin/env python3
"""Doxygen input filter for the site's markdown pages: the main page (README.md),
the step chapters and the notes are written for a repository browser (GitHub);
this makes the same links work in the Doxygen site (docs/CMakeLists.txt runs it
as FILTER_PATTERNS *.md). The files are not changed; the filter prints the page
as Doxygen should read it, line for line (warnings keep their line numbers).

  - Headings get an explicit Doxygen id (`## Measured (H200) {#<page>_measured-h200}`),
    so a GitHub-style anchor link `[...](#measured-h200)` or
    `[...](other/README.md#measured-h200)` resolves (Doxygen's own ids are
    autotoc_mdN, and Doxygen ids are global, hence the page prefix).
  - A link to a folder with a README.md links to that page; a link to another
    page goes to its Doxygen page id.
  - A link to a file the site shows (an input header or kernel source) goes to
    its page; a link to any other file of the repository (a script, a log, a
    JSON file), which the site does not hold, keeps its text and loses the link.
  - An image link gets the image's path from the repository root: Doxygen
    finds it in IMAGE_PATH by that path (a path with "../" it neither finds nor
    reports; a bare name is ambiguous once a forked step copies its figures).
  - HTML comments (`<!-- table: ... -->`, generated-table markers) are blanked:
    they are notes for the editors of the markdown, not for the reader.

Usage: mainpage.py --root REPOSITORY [--shown FILE_LIST] PAGE.md
  --shown: a file with one repository-relative path a line: the files the site
  has a page for (Doxygen's INPUT).
"""
import argparse
import os
import re
import sys

FENCE = re.compile(r"^\s*(```|~~~)")
ATX = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT_ID = re.compile(r"\{#([A-Za-z0-9_\-:.]+)\}\s*$")
# [text](target) and ![alt](target); target without spaces, optional "title".
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(\s+\"[^\"]*\")?\s*\)")


def page_id(root, path):
    """Doxygen's page name of a markdown file: its explicit title id, else md_<path>."""
    rel = os.path.relpath(path, root)
    if rel == "README.md":
        return "index"  # USE_MDFILE_AS_MAINPAGE
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip() and not line.lstrip().startswith("<!--"):
                    m = ATX.match(line.rstrip("\n"))
                    if m and len(m.group(1)) == 1:
                        e = EXPLICIT_ID.search(m.group(2))
                        if e:
                            return e.group(1)
                    break
    except OSError:
        pass
    return "md_" + re.sub(r"[ /:]", "_", os.path.splitext(rel)[0])


def github_slug(text):
    """The anchor GitHub gives a heading: text without markup, lower case,
    punctuation removed, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links -> their text
    text = re.sub(r"<[^>]+>", "", text)                      # inline HTML
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def heading_ids(root, path, lines=None):
    """The Doxygen id of every heading (level 2 and below) of a page, as
    {GitHub slug: id} and {line index: id}."""
    if lines is None:
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
        except OSError:
            return {}, {}
    prefix = page_id(root, path)
    by_slug, by_line, seen, in_code = {}, {}, {}, False
    for index, line in enumerate(lines):
        if FENCE.match(line):
            in_code = not in_code
            continue
        m = None if in_code else ATX.match(line)
        if not m or len(m.group(1)) == 1:
            continue
        text = m.group(2)
        explicit = EXPLICIT_ID.search(text)
        slug = github_slug(EXPLICIT_ID.sub("", text))
        n = seen.get(slug, 0)  # GitHub numbers repeated headings: x, x-1, x-2
        seen[slug] = n + 1
        key = slug if n == 0 else "%s-%d" % (slug, n)
        if explicit:
            by_slug[key] = explicit.group(1)
        else:
            by_slug[key] = by_line[index] = prefix + "_" + re.sub(r"[^A-Za-z0-9_\-]", "", key)
    return by_slug, by_line


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--shown", default=None)
    parser.add_argument("page")
    args = parser.parse_args()
    root = os.path.realpath(args.root)
    page = os.path.realpath(args.page)
    here = os.path.dirname(page)
    shown = set()
    if args.shown:
        with open(args.shown, encoding="utf-8") as f:
            shown = {line.strip() for line in f if line.strip()}

    with open(page, encoding="utf-8") as f:
        text = f.read()
    # HTML comments, blanked line for line (not inside code).
    lines = text.split("\n")
    out, in_code, in_comment = [], False, False
    for line in lines:
        if not in_comment and FENCE.match(line):
            in_code = not in_code
        if in_code:
            out.append(line)
            continue
        kept = ""
        rest = line
        while rest:
            if in_comment:
                end = rest.find("-->")
                if end < 0:
                    rest = ""
                else:
                    rest, in_comment = rest[end + 3:], False
            else:
                start = rest.find("<!--")
                if start < 0:
                    kept, rest = kept + rest, ""
                else:
                    kept, rest, in_comment = kept + rest[:start], rest[start + 4:], True
        out.append(kept if kept.strip() or line.strip() == "" else "")
    lines = out

    own_ids, own_lines = heading_ids(root, page, lines)
    other_ids = {}

    def target_of_link(match):
        bang, label, target, title = match.group(1), match.group(2), match.group(3), match.group(4) or ""
        if not target or re.match(r"^[a-z][a-z0-9+.\-]*:", target, re.I) or target.startswith("@"):
            return match.group(0)  # URL, mailto:, @ref: as written
        if bang:  # an image: Doxygen looks it up in IMAGE_PATH, by a path without "../"
            full = os.path.realpath(os.path.join(here, target))
            if os.path.isfile(full) and not os.path.relpath(full, root).startswith(".."):
                return "![%s](%s%s)" % (label, os.path.relpath(full, root), title)
            return match.group(0)
        path, _, anchor = target.partition("#")
        if not path:  # an anchor of this page
            return "[%s](#%s%s)" % (label, own_ids.get(anchor, anchor), title)
        full = os.path.realpath(os.path.join(here, path))
        if os.path.isdir(full) and os.path.isfile(os.path.join(full, "README.md")):
            full = os.path.join(full, "README.md")
        rel = os.path.relpath(full, root)
        if rel.startswith(".."):
            return match.group(0)  # outside the repository
        if full.endswith(".md") and rel in shown:
            if anchor:
                if full not in other_ids:
                    other_ids[full] = heading_ids(root, full)[0]
                return "[%s](@ref %s)" % (label, other_ids[full].get(anchor, anchor))
            return "[%s](@ref %s)" % (label, page_id(root, full))
        if rel in shown:
            return "[%s](@ref %s)" % (label, rel)
        if os.path.exists(full):
            return label  # a file the site does not hold: the text, no link
        # A broken link: said plainly here, and made a reference Doxygen cannot
        # resolve, so that it is an error of the docs build.
        sys.stderr.write("%s:%d: link to %s: no such file in the repository\n" % (args.page, line_number[0], target))
        return "[%s](@ref %s)" % (label, rel)

    result = []
    in_code = False
    line_number = [0]
    for index, line in enumerate(lines):
        line_number[0] = index + 1
        if FENCE.match(line):
            in_code = not in_code
        elif not in_code:
            if index in own_lines:
                line = "%s {#%s}" % (line.rstrip(), own_lines[index])
            line = LINK.sub(target_of_link, line)
        result.append(line)
    sys.stdout.write("\n".join(result))


if __name__ == "__main__":
    main()
