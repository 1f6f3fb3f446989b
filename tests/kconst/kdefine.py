#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
tests/kconst/kdefine.py: read the value a C header gives a name, as the kernel's build would
(for tests/host/kconst.sh).

  kdefine.py compare ROOT [--config FILE] [--also HEADER]...
      Each stdin line is "LABEL KNAME VALUE HEADER...": nodefd's LABEL has VALUE (0x.., as an
      unsigned 64-bit number); KNAME ("=": LABEL) is the kernel's name for it, defined in the
      first of the HEADERs (paths under ROOT, a kernel source tree) that defines it. A KNAME
      of "syscall:NAME" is that system call's number in the HEADER, a syscall_*.tbl. Prints
      "LABEL: nodefd 0x.. kernel 0x.. (file:line)" for each value that differs and a line for
      each that cannot be found or evaluated; exits 1 if there was any.
  kdefine.py scan FILE...
      Each #define in the FILEs (include guards left out), one tab-separated line each:
      NAME, VALUE (0x.., or "-" when it is function-like or does not evaluate to a number),
      FILE:LINE, BODY.

A header is read as the preprocessor would: comments and line continuations are dropped;
#if/#ifdef/#elif/#else branches are followed for an x86_64 build (the kernel's .config, given
with --config, decides each CONFIG_ symbol; without one, those other than the x86_64 basics
are unknown and both branches are read; a name defined in both to different values is an
error). Enumerators (NAME = VALUE, or the previous one plus one) count as definitions.
Values: integer literals of any base and suffix, casts ((__force fmode_t), (void *), ...),
BIT(), ERR_PTR(), the C operators; names in them are looked up in the same header, then in the
other listed ones, then in each --also HEADER (ERR_PTR(-EINVAL): the errno headers).
"""

import argparse
import os
import re
import sys

MASK = (1 << 64) - 1

# The preprocessor's view of an x86_64 kernel build, besides the .config.
PREDEFINED = {"__KERNEL__": 1, "__x86_64__": 1, "__LP64__": 1, "__BITS_PER_LONG": 64,
              "BITS_PER_LONG": 64, "CONFIG_X86": 1, "CONFIG_X86_64": 1, "CONFIG_64BIT": 1}
UNDEFINED = {"__ASSEMBLY__", "__ASSEMBLER__", "__i386__", "BUILD_VDSO32", "BUILD_VDSO32_64",
             "__GENKSYMS__", "__CHECKER__", "CONFIG_X86_32"}

# Function-like macros of the kernel's, by what they compute.
BUILTINS = {
    "BIT": lambda x: 1 << x, "BIT_ULL": lambda x: 1 << x, "BIT_U32": lambda x: 1 << x,
    "BIT_U64": lambda x: 1 << x, "_BITUL": lambda x: 1 << x, "_BITULL": lambda x: 1 << x,
    "ERR_PTR": lambda x: x, "UL": lambda x: x, "ULL": lambda x: x, "_UL": lambda x: x,
    "_ULL": lambda x: x, "_AC": lambda x, _suffix=None: x,
}

TYPE_WORDS = {"void", "char", "short", "int", "long", "unsigned", "signed", "const", "volatile",
              "struct", "union", "enum", "__force", "__bitwise", "__user", "__iomem", "bool"}


class EvalError(Exception):
    pass


def u64(v):
    return v & MASK


# --- expressions --------------------------------------------------------------------------

TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|[0-9]+)([uUlL]*)(?![\w.])|([A-Za-z_]\w*)"
                   r"|(<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^~!<>()?:,]))")


def tokenize(s):
    toks, pos, s = [], 0, s.strip()
    while pos < len(s):
        m = TOKEN.match(s, pos)
        if not m:
            raise EvalError("cannot read %r" % s[pos:])
        pos = m.end()
        if m.group(1):
            lit = m.group(1)
            if lit[:2] in ("0x", "0X"):
                toks.append(("num", int(lit, 16)))
            elif len(lit) > 1 and lit[0] == "0":
                toks.append(("num", int(lit, 8)))
            else:
                toks.append(("num", int(lit)))
        elif m.group(3):
            toks.append(("id", m.group(3)))
        else:
            toks.append(("op", m.group(4)))
    return toks


BINARY = {  # operator: (precedence, function); None as an operand is "unknown" (#if only)
    "||": (1, None), "&&": (2, None),
    "|": (3, lambda a, b: a | b), "^": (4, lambda a, b: a ^ b), "&": (5, lambda a, b: a & b),
    "==": (6, lambda a, b: int(a == b)), "!=": (6, lambda a, b: int(a != b)),
    "<": (7, lambda a, b: int(a < b)), ">": (7, lambda a, b: int(a > b)),
    "<=": (7, lambda a, b: int(a <= b)), ">=": (7, lambda a, b: int(a >= b)),
    "<<": (8, lambda a, b: a << b), ">>": (8, lambda a, b: a >> b),
    "+": (9, lambda a, b: a + b), "-": (9, lambda a, b: a - b),
    "*": (10, lambda a, b: a * b),
    "/": (10, lambda a, b: int(a / b) if b else None),
    "%": (10, lambda a, b: a - b * int(a / b) if b else None),
}


class Expr:
    """A C constant expression. resolve(name) gives a name's value; in an #if (cond=True),
    defined() is known and a name may be unknown (None), which spreads to the result unless
    && or || decide without it."""

    def __init__(self, text, resolve, cond=False, defined=None):
        self.toks = tokenize(text)
        self.i = 0
        self.resolve = resolve
        self.cond = cond
        self.defined = defined

    def peek(self, k=0):
        return self.toks[self.i + k] if self.i + k < len(self.toks) else (None, None)

    def take(self, want=None):
        t = self.peek()
        if t[0] is None or (want is not None and t[1] != want):
            raise EvalError("expected %r" % want if want else "unexpected end")
        self.i += 1
        return t

    def value(self):
        v = self.ternary()
        if self.i != len(self.toks):
            raise EvalError("trailing %r" % (self.peek()[1],))
        return v

    def ternary(self):
        c = self.binary(1)
        if self.peek() == ("op", "?"):
            self.take()
            a = self.ternary()
            self.take(":")
            b = self.ternary()
            return None if c is None else (a if c else b)
        return c

    def binary(self, minprec):
        a = self.unary()
        while True:
            kind, op = self.peek()
            if kind != "op" or op not in BINARY or BINARY[op][0] < minprec:
                return a
            self.take()
            b = self.binary(BINARY[op][0] + 1)
            if op == "&&":
                a = 0 if a == 0 or b == 0 else (None if a is None or b is None else 1)
            elif op == "||":
                a = 1 if a or b else (None if a is None or b is None else 0)
            elif a is None or b is None:
                a = None
            else:
                a = BINARY[op][1](a, b)

    def unary(self):
        kind, tok = self.peek()
        if kind == "op" and tok in "-+~!":
            self.take()
            v = self.unary()
            if v is None:
                return None
            return {"-": -v, "+": v, "~": ~v, "!": int(not v)}[tok]
        if kind == "op" and tok == "(" and self.is_cast():
            return self.unary()
        return self.primary()

    def is_cast(self):
        """At "(": a type in parentheses ((__force fmode_t), (void *), (u32)) is skipped."""
        j, words = self.i + 1, []
        while j < len(self.toks) and self.toks[j] != ("op", ")"):
            kind, tok = self.toks[j]
            if kind != "id" and tok != "*":
                return False
            words.append(tok)
            j += 1
        if j >= len(self.toks) or not words:
            return False
        if not ("*" in words or any(w in TYPE_WORDS or w.endswith("_t") or
                                      re.fullmatch(r"(__)?[us](8|16|32|64)", w) for w in words)):
            return False
        self.i = j + 1
        return True

    def primary(self):
        kind, tok = self.take()
        if kind == "num":
            return tok
        if kind == "op" and tok == "(":
            v = self.ternary()
            self.take(")")
            return v
        if kind != "id":
            raise EvalError("unexpected %r" % tok)
        if self.cond and tok == "defined":
            paren = self.peek() == ("op", "(")
            if paren:
                self.take()
            name = self.take()[1]
            if paren:
                self.take(")")
            return self.defined(name)
        if self.peek() == ("op", "("):
            self.take()
            args = []
            if self.peek() != ("op", ")"):
                args.append(self.arg(tok))
                while self.peek() == ("op", ","):
                    self.take()
                    args.append(self.arg(tok))
            self.take(")")
            if self.cond and tok in ("IS_ENABLED", "IS_BUILTIN", "IS_MODULE", "IS_REACHABLE"):
                return self.defined((tok, args[0]))
            if tok not in BUILTINS:
                if self.cond:
                    return None
                raise EvalError("unknown macro %s()" % tok)
            if any(a is None for a in args):
                return None
            return BUILTINS[tok](*args)
        return self.resolve(tok)

    def arg(self, func):
        # An argument of IS_ENABLED() is a name, not a value, and so is _AC()'s type suffix.
        if (self.cond or func == "_AC") and self.peek()[0] == "id" and self.peek(1)[1] in (")", ","):
            return self.take()[1]
        return self.ternary()


# --- headers ------------------------------------------------------------------------------

# A line break, a continuation, a comment or a string or character literal (up to its line's end
# at most, as the kernel's headers have apostrophes in #error text).
LEXEME = re.compile(r"\\\n|\n|/\*.*?(?:\*/|\Z)|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"?|'(?:\\.|[^'\\\n])*'?", re.S)


def logical_lines(text):
    """(line number, logical line) pairs: continuations joined, each comment one space."""
    out, line, start, pos = [], 1, 1, 0
    for m in LEXEME.finditer(text):
        out.append(text[pos:m.start()])
        pos = m.end()
        lex = m.group(0)
        if lex == "\n":
            yield start, "".join(out)
            out = []
            line += 1
            start = line
        elif lex == "\\\n":
            line += 1
        elif lex.startswith("/*"):
            line += lex.count("\n")
            out.append(" ")
        elif not lex.startswith("//"):
            out.append(lex)
    out.append(text[pos:])
    if "".join(out).strip():
        yield start, "".join(out)


def not3(v):
    return None if v is None else not v


class Config:
    def __init__(self, path=None):
        self.values = None
        if path:
            self.values = {}
            with open(path, encoding="utf-8", errors="replace") as f:
                for ln in f:
                    m = re.match(r"(CONFIG_\w+)=(.*)", ln.strip())
                    if m:
                        self.values[m.group(1)] = m.group(2)

    def defined(self, what):
        """True, False or None (unknown) for a name in defined() or an IS_ENABLED()."""
        if isinstance(what, tuple):
            test, sym = what
            v = self.symbol(sym)
            if v is None:
                return None
            return {"IS_BUILTIN": v == "y", "IS_MODULE": v == "m"}.get(test, v in ("y", "m"))
        if what in PREDEFINED:
            return True
        if what in UNDEFINED:
            return False
        if what.startswith("CONFIG_"):
            base = what[:-len("_MODULE")] if what.endswith("_MODULE") else what
            v = self.symbol(base)
            if v is None:
                return None
            return v == "m" if base != what else v not in (False, "m")
        return None

    def symbol(self, sym):
        """A CONFIG_ symbol's value ("y", "m", a number...), False if unset, None if unknown."""
        if sym in PREDEFINED:
            return "y"
        if sym in UNDEFINED:
            return False
        if self.values is None:
            return None
        return self.values.get(sym, False)

    def if_value(self, name):
        """A name's value in an #if: unknown (None) unless predefined or a CONFIG_ symbol."""
        if name in PREDEFINED:
            return PREDEFINED[name]
        if name in UNDEFINED:
            return 0
        if name.startswith("CONFIG_"):
            v = self.symbol(name)
            if v is None:
                return None
            if v is False or v == "m":
                return 0
            if v == "y":
                return 1
            try:
                return int(v, 0)
            except ValueError:
                return None
        return None


class Header:
    """The definitions one header makes: name -> [(line, kind, body)], where kind is "define"
    (body: the text), "func" (function-like), "enum" (body: (base text or None, offset))."""

    def __init__(self, path, rel, config):
        self.rel = rel
        self.defs = {}
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if rel.endswith(".tbl"):
            self.read_table(text)
            return
        stack = []          # (parent live, this branch: True/False/None, any branch taken)
        live = True
        code = []
        last_ifndef = None
        for line, ln in logical_lines(text):
            m = re.match(r"\s*#\s*(\w*)(.*)", ln)
            if not m:
                if live and ln.strip():
                    code.append((line, ln))
                continue
            d, rest = m.group(1), m.group(2).strip()
            if d in ("if", "ifdef", "ifndef"):
                if d == "if":
                    c = self.cond(rest, config)
                else:
                    c = config.defined(rest.split()[0]) if rest else None
                    if d == "ifndef":
                        c = not3(c)
                        last_ifndef = rest.split()[0] if rest else None
                stack.append((live, c, c))
            elif d in ("elif", "elifdef", "elifndef") and stack:
                parent, _, taken = stack[-1]
                if taken is True:
                    c = False
                else:
                    if d == "elif":
                        c = self.cond(rest, config)
                    else:
                        c = config.defined(rest.split()[0]) if rest else None
                        if d == "elifndef":
                            c = not3(c)
                    if taken is None and c is not False:
                        c = None
                stack[-1] = (parent, c, True if taken or c else (None if None in (taken, c) else False))
            elif d == "else" and stack:
                parent, _, taken = stack[-1]
                stack[-1] = (parent, not3(taken), True)
            elif d == "endif" and stack:
                stack.pop()
            elif d == "define" and live:
                dm = re.match(r"(\w+)(\()?\s*(.*)", rest)
                if dm:
                    name, body = dm.group(1), dm.group(3).strip()
                    if dm.group(2):
                        self.add(name, line, "func", rest)
                    elif body or name != last_ifndef:    # not an include guard
                        self.add(name, line, "define", body)
            if d != "ifndef":
                last_ifndef = None
            live = not stack or (stack[-1][0] and stack[-1][1] is not False)
        self.read_enums(code)

    def cond(self, text, config):
        try:
            v = Expr(text, config.if_value, cond=True, defined=config.defined).value()
        except EvalError:
            return None
        return None if v is None else bool(v)

    def add(self, name, line, kind, body):
        self.defs.setdefault(name, []).append((line, kind, body))

    def read_enums(self, code):
        text, starts = "", []
        for line, ln in code:
            starts.append((len(text), line))
            text += ln + "\n"

        def line_at(off):
            found = 1
            for o, ln in starts:
                if o > off:
                    break
                found = ln
            return found

        for m in re.finditer(r"\benum\b\s*(?:\w+\s*)?\{", text):
            depth, j = 1, m.end()
            while j < len(text) and depth:
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
            base, offset, item_start = None, 0, m.end()
            for piece in self.split_top(text[m.end():j - 1]):
                em = re.match(r"\s*([A-Za-z_]\w*)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)?(?:=\s*(.*\S))?\s*$",
                              piece, re.S)
                if em:
                    if em.group(2) is not None:
                        base, offset = em.group(2), 0
                    lead = len(piece) - len(piece.lstrip())
                    self.add(em.group(1), line_at(item_start + lead), "enum", (base, offset))
                    offset += 1
                item_start += len(piece) + 1

    @staticmethod
    def split_top(body):
        parts, depth, cur = [], 0, ""
        for c in body:
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            if c == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += c
        if cur.strip():
            parts.append(cur)
        return parts

    def read_table(self, text):
        for i, ln in enumerate(text.splitlines(), 1):
            f = ln.split("#", 1)[0].split()
            if len(f) >= 3 and f[0].isdigit() and f[1] != "x32":
                self.add("syscall:" + f[2], i, "define", f[0])


class Source:
    """A kernel source tree (only the needed headers present) and its .config."""

    def __init__(self, root, config, also=()):
        self.root = root
        self.config = config
        self.also = list(also)
        self.headers = {}

    def header(self, rel):
        if rel not in self.headers:
            path = os.path.join(self.root, rel)
            self.headers[rel] = Header(path, rel, self.config) if os.path.isfile(path) else None
        return self.headers[rel]

    def lookup(self, name, rels, depth=0):
        """(set of values, "file:line") from the first of rels that defines name, or None."""
        if depth > 20:
            raise EvalError("%s: too deeply nested" % name)
        for rel in rels:
            h = self.header(rel)
            if h is None or name not in h.defs:
                continue
            others = [rel] + [r for r in rels + self.also if r != rel]
            values, where = set(), []
            for line, kind, body in h.defs[name]:
                if kind == "func":
                    raise EvalError("%s is a function-like macro (%s:%d)" % (name, rel, line))
                values.add(u64(self.evaluate(kind, body, others, depth, "%s:%d" % (rel, line))))
                where.append("%s:%d" % (rel, line))
            return values, ", ".join(where)
        return None

    def evaluate(self, kind, body, rels, depth, where):
        def resolve(n):
            found = self.lookup(n, rels, depth + 1)
            if found is None:
                raise EvalError("%s (in %s) is not defined in %s" % (n, where, " ".join(rels)))
            if len(found[0]) != 1:
                raise EvalError("%s has several values (%s)" % (n, found[1]))
            return next(iter(found[0]))

        if kind == "enum":
            base, offset = body
            v = 0 if base is None else Expr(base, resolve).value()
        else:
            v = Expr(body, resolve).value()
        if v is None:
            raise EvalError("%s does not evaluate" % where)
        return v + (offset if kind == "enum" else 0)


# --- commands -----------------------------------------------------------------------------

def compare(argv):
    ap = argparse.ArgumentParser(prog="kdefine.py compare")
    ap.add_argument("root")
    ap.add_argument("--config")
    ap.add_argument("--also", action="append", default=[])
    args = ap.parse_args(argv)
    src, bad, n = Source(args.root, Config(args.config), args.also), 0, 0
    for ln in sys.stdin:
        f = ln.split()
        if not f or f[0].startswith("#"):
            continue
        label, kname, want, rels = f[0], f[1], u64(int(f[2], 0)), f[3:]
        kname = label if kname == "=" else kname
        n += 1
        try:
            found = src.lookup(kname, rels)
        except (EvalError, RecursionError) as e:
            print("%s: %s cannot be evaluated: %s" % (label, kname, e))
            bad += 1
            continue
        if found is None:
            print("%s: %s is not defined in %s" % (label, kname, " ".join(rels)))
            bad += 1
            continue
        values, where = found
        if values != {want}:
            print("%s: nodefd %#x kernel %s (%s)" % (label, want,
                                                     " or ".join("%#x" % v for v in sorted(values)), where))
            bad += 1
    print("%d of %d values match" % (n - bad, n))
    return 1 if bad else 0


def scan(files):
    for path in files:
        h = Header(path, path, Config())
        src = Source(".", Config())
        src.headers = {path: h}
        for name, defs in sorted(h.defs.items(), key=lambda kv: kv[1][0][0]):
            for line, kind, body in defs:
                if kind == "enum":
                    continue
                value = "-"
                if kind == "define":
                    try:
                        value = "%#x" % u64(src.evaluate(kind, body, [path], 0, path))
                    except (EvalError, RecursionError):
                        pass
                print("%s\t%s\t%s:%d\t%s" % (name, value, path, line, body))
    return 0


def usage():
    print("usage: kdefine.py compare ROOT [--config FILE] [--also HEADER]... <LINES\n"
          "       kdefine.py scan FILE...",
          file=sys.stderr)
    return 2


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "compare":
        return compare(sys.argv[2:])
    if len(sys.argv) >= 3 and sys.argv[1] == "scan":
        return scan(sys.argv[2:])
    return usage()


if __name__ == "__main__":
    sys.exit(main())
