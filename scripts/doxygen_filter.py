#!/usr/bin/env python3
"""Doxygen input filter for gantry's headers (scripts/api_docs.sh).

gantry's headers document their declarations with plain // comments: the block right above a
declaration says what it is, a comment after a member on its line says what the member holds, and
the block at the top of a header says what the header is for. Doxygen reads only ///, so this
filter rewrites, without adding or removing a line:
  - the header's opening block, ending at #pragma once, as the file's documentation;
  - a comment block directly above a declaration at namespace, class or enum scope as that
    declaration's documentation (a block followed by a blank line stays a plain comment);
  - a trailing comment after a member or enumerator (and its aligned continuation lines) as ///<;
and escapes in the rewritten text what Doxygen would take for markup (<, >, \\, @, &, #, %, $)
outside `code spans`. Comments inside function bodies, initializers and lambdas are left alone.
"""
import pathlib
import re
import sys

DECLARATION_KINDS = ("namespace", "class", "enum")


def escape(text):
    """Doxygen-safe text: markup characters outside `code spans` escaped."""
    out = []
    for i, part in enumerate(text.split("`")):
        if i % 2 == 1:
            out.append(part)
            continue
        part = part.replace("\\", "\\\\")
        for ch in "@<>&#%$":
            part = part.replace(ch, "\\" + ch)
        out.append(part)
    if text.count("`") % 2 == 1:  # an unbalanced backtick: keep it literal
        return text.replace("\\", "\\\\").replace("<", "\\<").replace(">", "\\>")
    return "`".join(out)


def code_part(line):
    """The line without string and character literals and without its // comment; and the
    column where that comment starts (or -1)."""
    out = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == '"' or c == "'":
            quote = c
            j = i + 1
            while j < n and line[j] != quote:
                j += 2 if line[j] == "\\" else 1
            out.append(quote + quote)
            i = j + 1
            continue
        if line.startswith("//", i):
            return "".join(out), i
        if line.startswith("/*", i):
            end = line.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        out.append(c)
        i += 1
    return "".join(out), -1


def strip_templates(head):
    """head without its template<...> parameter lists."""
    while True:
        m = re.search(r"\btemplate\s*<", head)
        if not m:
            return head
        depth, j = 0, m.end() - 1
        while j < len(head):
            if head[j] == "<":
                depth += 1
            elif head[j] == ">":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        head = head[: m.start()] + head[j + 1 :]


def scope_of(head):
    """The kind of scope a '{' opens, from the code since the previous ';', '{' or '}'."""
    head = strip_templates(head).strip()
    head = re.sub(r"\[\[.*?\]\]", "", head).strip()
    if re.search(r"\bnamespace\b", head) or head.startswith('extern ""'):
        return "namespace"
    if re.match(r"^(typedef\s+)?enum\b", head) and "=" not in head:
        return "enum"
    if re.match(r"^(class|struct|union)\b", head) and "(" not in head and "=" not in head:
        return "class"
    return "body"


def filter_text(lines):
    out = list(lines)
    scopes = []  # kinds of the open braces
    head = ""  # code since the last ';', '{' or '}' at the current position
    pending = []  # indices of the comment-only lines just above the current line
    trailing_column = -1  # the column of the previous line's trailing ///<, for continuations
    opening_done = False

    def in_declaration_scope():
        return not scopes or scopes[-1] in DECLARATION_KINDS

    for index, line in enumerate(lines):
        stripped = line.strip()
        # The header's opening comment block, up to #pragma once.
        if not opening_done:
            if stripped.startswith("//"):
                pending.append(index)
                continue
            if stripped == "#pragma once" and pending:
                for k in pending:
                    out[k] = rewrite_comment(lines[k], "///")
                out[index] = "/// @file"
                pending = []
                opening_done = True
                continue
            opening_done = True

        if stripped.startswith("//") and not stripped.startswith("///"):
            column = line.index("//")
            if trailing_column >= 0 and column == trailing_column and in_declaration_scope():
                out[index] = rewrite_comment(line, "///<")
                continue
            trailing_column = -1
            pending.append(index)
            continue
        if stripped == "" or stripped.startswith("#"):  # a blank line or a directive ends a block
            pending = []
            trailing_column = -1
            continue

        code, comment_at = code_part(line)
        # A documentation block for the declaration this line starts.
        if pending and in_declaration_scope() and head.strip() == "":
            starts = code.strip()
            if starts and not starts.startswith(("}", "public:", "private:", "protected:")):
                for k in pending:
                    out[k] = rewrite_comment(lines[k], "///")
        pending = []
        trailing_column = -1
        # A trailing comment after a member or enumerator.
        if comment_at >= 0 and in_declaration_scope():
            before = code.rstrip()
            if before.endswith((";", ",")) or (scopes and scopes[-1] == "enum" and before):
                if not line.startswith("///", comment_at):
                    out[index] = line[:comment_at] + rewrite_comment(line[comment_at:], "///<")
                    trailing_column = comment_at
        # Follow the braces.
        for c in code:
            if c == "{":
                scopes.append(scope_of(head))
                head = ""
            elif c == "}":
                if scopes:
                    scopes.pop()
                head = ""
            elif c == ";":
                head = ""
            else:
                head += c
        if scopes and scopes[-1] == "class" and re.match(r"^\s*(public|private|protected)\s*:", code):
            head = ""  # an access specifier is not the start of the next declaration
    return out


def rewrite_comment(line, marker):
    """`line` (a // comment, possibly indented) as a `marker` comment with escaped text."""
    at = line.index("//")
    text = line[at + 2 :]
    if text.startswith("/"):
        return line
    return line[:at] + marker + escape(text)


def filtered(path):
    with open(path, encoding="utf-8") as f:
        return "\n".join(filter_text(f.read().split("\n")))


def main():
    """`doxygen_filter.py FILE` writes FILE filtered to stdout (a Doxygen FILTER_PATTERNS filter);
    `doxygen_filter.py --tree SRC DST` writes every .hpp and .cuh under SRC filtered to the same
    place under DST, in one process: a Python start per header, twice (the reference and its source
    pages), cost most of the API reference's build."""
    if len(sys.argv) == 4 and sys.argv[1] == "--tree":
        source, target = pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
        for path in sorted(source.rglob("*")):
            if path.suffix in (".hpp", ".cuh") and path.is_file():
                out = target / path.relative_to(source)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(filtered(path), encoding="utf-8")
        return
    if len(sys.argv) != 2:
        sys.exit("usage: doxygen_filter.py FILE | doxygen_filter.py --tree SRC DST")
    sys.stdout.write(filtered(sys.argv[1]))


if __name__ == "__main__":
    main()
