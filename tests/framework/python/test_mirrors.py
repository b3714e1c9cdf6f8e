"""The Python peer's copies of C++ definitions, checked against the headers.

The package mirrors ferry's and CAF's error enums (`errors._NAMES`), the
frame types (`wire.FrameType`), the frame kinds (`message.KIND_NAMES`),
CAF's message id bits and the wire's constants and limits. Each test reads
the C++ header that defines them (comments stripped, `= n` values and
integer expressions evaluated) and fails naming every name or value that
differs, and which side has which. No C++ node is needed: ferry's sources
are found through FERRY_SOURCE_DIR (set by ctest), else relative to this
file; CAF's headers through FERRY_CAF_INCLUDE_DIR, else /usr/include.
"""

from __future__ import annotations

import ast
import operator
import os
import re
import unittest
from collections.abc import Callable
from pathlib import Path

from ferry import errors, message, shapes, wire

SOURCE_DIR = Path(os.environ.get("FERRY_SOURCE_DIR")
                  or Path(__file__).resolve().parents[3])
CAF_INCLUDE_DIR = Path(os.environ.get("FERRY_CAF_INCLUDE_DIR")
                       or "/usr/include")

# A category of `errors._NAMES`: the header and enum it mirrors, and
# whether it mirrors every value (CAF's `sec` only the ones ferry uses;
# "" stands for a value it leaves out).
ERROR_ENUMS = {
    errors.FERRY_FW: ("framework/include/ferry/errc.hpp", "errc", True),
    errors.FERRY_SER: ("serializers/include/ferry/serializers/errc.hpp",
                       "errc", True),
    errors.FERRY_STO: ("store/include/ferry/store/errc.hpp", "errc", True),
    errors.EXIT: ("caf/exit_reason.hpp", "exit_reason", True),
    errors.SYSTEM: ("caf/sec.hpp", "sec", False),
}

# A comment, or a string or character literal (kept: it may hold "//").
_TOKENS = re.compile(r"//[^\n]*|/\*.*?\*/"
                     r"""|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""", re.S)


def strip_comments(text: str) -> str:
    """`text` without its C++ comments; string and character literals
    (which may hold `//`) stay as they are."""
    return _TOKENS.sub(lambda m: m.group(0) if m.group(0)[0] in "\"'"
                       else " ", text)


_OPS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_}


def evaluate(expr: str, known: dict[str, int] | None = None) -> int:
    """The value of C++ integer expression `expr`: literals (decimal, hex,
    with u/l suffixes), `T{n}` casts, + - * / << >> | & and names in
    `known`. Raises ValueError for anything else."""
    text = re.sub(r"\b[A-Za-z_][\w:]*\s*\{([^{}]*)\}", r"(\1)", expr)
    text = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\b", r"\1", text)
    text = text.replace("/", "//").strip()
    names = known or {}

    def value(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        raise ValueError(f"cannot evaluate {expr!r} as C++ integers")

    try:
        return value(ast.parse(text, mode="eval").body)
    except SyntaxError:
        raise ValueError(f"cannot evaluate {expr!r} as C++ integers")


def read_header(path: Path) -> str:
    if not path.is_file():
        raise AssertionError(f"no header {path} (set FERRY_SOURCE_DIR to "
                             "ferry's source directory)")
    return strip_comments(path.read_text())


def parse_enum(text: str, name: str) -> list[tuple[str, int]]:
    """The enumerators of `enum class name` in `text` (comments stripped)
    as (name, value) in declaration order."""
    found = re.findall(rf"\benum\s+class\s+{name}\b[^{{;]*\{{([^}}]*)\}}",
                       text)
    if len(found) != 1:
        raise AssertionError(f"{len(found)} definitions of enum class "
                             f"{name}, expected 1")
    out: list[tuple[str, int]] = []
    known: dict[str, int] = {}
    following = 0
    for entry in found[0].split(","):
        entry = entry.strip()
        if not entry:
            continue
        match = re.fullmatch(r"([A-Za-z_]\w*)\s*(?:=\s*(.+))?", entry, re.S)
        if match is None:
            raise AssertionError(f"enum class {name}: cannot read "
                                 f"enumerator {entry!r}")
        label, expr = match.groups()
        number = evaluate(expr, known) if expr else following
        out.append((label, number))
        known[label] = number
        following = number + 1
    return out


def parse_constant(text: str, name: str) -> int:
    """The value of the one definition `name = expr;` or `name{expr};` in
    `text` (a constant or a member's default)."""
    found = re.findall(rf"\b{name}\s*(?:=(?!=)\s*([^;]+?)|\{{([^;{{}}]*)\}})"
                       r"\s*;", text)
    if len(found) != 1:
        raise AssertionError(f"{len(found)} definitions of {name}, "
                             "expected 1")
    return evaluate(found[0][0] or found[0][1])


def parse_chars(text: str, name: str) -> bytes:
    """The bytes of `name{...}`, an array of character literals."""
    start = re.search(rf"\b{name}\s*\{{", text)
    if start is None:
        raise AssertionError(f"no definition of {name}")
    depth, pos = 1, start.end()
    while depth:
        if pos == len(text):
            raise AssertionError(f"{name}{{ has no closing brace")
        depth += {"{": 1, "}": -1}.get(text[pos], 0)
        pos += 1
    chars = re.findall(r"'(\\.|[^'\\])'", text[start.end():pos - 1])
    return b"".join(ast.literal_eval(f"'{c}'").encode("latin-1")
                    for c in chars)


def names_by_value(names: list[str],
                   cpp: list[tuple[str, int]], complete: bool) -> list[str]:
    """The differences between a Python list of names by value and the
    C++ enumerators `cpp`, one line each."""
    by_value: dict[int, str] = {}
    lines: list[str] = []
    for label, number in cpp:
        if number in by_value:
            lines.append(f"C++ has {by_value[number]!r} and {label!r} "
                         f"both = {number}")
        by_value[number] = label
    for number in sorted(set(range(len(names))) | set(by_value)):
        py = names[number] if number < len(names) else ""
        cc = by_value.get(number, "")
        if py == cc or (not complete and not py):
            continue
        if not py:
            lines.append(f"= {number}: only C++ has {cc!r}")
        elif not cc:
            lines.append(f"= {number}: only Python has {py!r}")
        else:
            lines.append(f"= {number}: Python has {py!r}, C++ has {cc!r}")
    return lines


class ParserTest(unittest.TestCase):
    def test_the_enum_parser_reads_comments_explicit_and_hex_values(
            self) -> None:
        text = strip_comments("""
            enum class other { x };
            /// A comment with a, comma and = 7.
            enum class sut : uint8_t {
              a = 0, // b = 9, c
              /* d, e = 4 */ b,
              c = 0x10,
              d = c + 2,
              e = 1u << 5,
            };""")

        sut = parse_enum(text, "sut")

        self.assertEqual(sut, [("a", 0), ("b", 1), ("c", 16), ("d", 18),
                               ("e", 32)])

    def test_the_constant_parser_reads_casts_suffixes_and_braces(self) -> None:
        text = strip_comments("""
            inline constexpr uint64_t big = uint64_t{1} << 30;  // = 2
            inline constexpr size_t head{29 + 8 + 4096 * 33};
            uint32_t limit = 64 * 1024u; // limit = 3;
            inline constexpr std::array<std::byte, 3> magic{
              std::byte{'/'}, std::byte{'/'}, std::byte{'\\n'}};""")

        self.assertEqual(parse_constant(text, "big"), 1 << 30)
        self.assertEqual(parse_constant(text, "head"), 29 + 8 + 4096 * 33)
        self.assertEqual(parse_constant(text, "limit"), 65536)
        self.assertEqual(parse_chars(text, "magic"), b"//\n")

    def test_a_difference_names_which_side_has_which_name(self) -> None:
        cpp = [("none", 0), ("gone", 1), ("late", 2)]

        lines = names_by_value(["none", "went", "", "extra"], cpp, True)

        self.assertEqual(lines, ["= 1: Python has 'went', C++ has 'gone'",
                                 "= 2: only C++ has 'late'",
                                 "= 3: only Python has 'extra'"])


class ErrorNamesTest(unittest.TestCase):
    def check(self, category: str) -> None:
        path, enum, complete = ERROR_ENUMS[category]
        if path.startswith("caf/"):
            header = CAF_INCLUDE_DIR / path
            if not header.is_file():
                self.skipTest(f"no CAF header {header} (set "
                              "FERRY_CAF_INCLUDE_DIR)")
            path = str(header)
        else:
            header = SOURCE_DIR / path
        cpp = parse_enum(read_header(header), enum)

        lines = names_by_value(errors._NAMES[category], cpp, complete)

        if lines:
            self.fail(f"errors._NAMES[{category!r}] differs from enum class "
                      f"{enum} in {path}:\n  " + "\n  ".join(lines))

    def test_every_mirrored_category_has_a_header_to_match(self) -> None:
        unmatched = sorted(set(errors._NAMES) - set(ERROR_ENUMS))

        self.assertEqual(unmatched, [], "categories of errors._NAMES with "
                         "no header in ERROR_ENUMS")

    def test_framework_names_match_ferry_errc(self) -> None:
        self.check(errors.FERRY_FW)

    def test_serializers_names_match_ferry_serializers_errc(self) -> None:
        self.check(errors.FERRY_SER)

    def test_store_names_match_ferry_store_errc(self) -> None:
        if errors.FERRY_STO not in errors._NAMES:
            self.skipTest("the package names no ferry_sto codes")
        self.check(errors.FERRY_STO)

    def test_exit_names_match_cafs_exit_reason(self) -> None:
        self.check(errors.EXIT)

    def test_system_names_match_cafs_sec(self) -> None:
        self.check(errors.SYSTEM)


class WireTest(unittest.TestCase):
    def header(self, path: str) -> str:
        return read_header(SOURCE_DIR / path)

    def test_frame_types_match_frame_type(self) -> None:
        path = "framework/src/wire/frame.hpp"
        cpp = dict(parse_enum(self.header(path), "frame_type"))
        py = {t.name.lower(): t.value for t in wire.FrameType}

        lines = [f"{n}: Python has {py[n]}, C++ has {cpp[n]}"
                 for n in sorted(set(py) & set(cpp)) if py[n] != cpp[n]]
        lines += [f"only Python has FrameType.{n.upper()} = {py[n]}"
                  for n in sorted(set(py) - set(cpp))]
        lines += [f"only C++ has frame_type::{n} = {cpp[n]}"
                  for n in sorted(set(cpp) - set(py))]

        if lines:
            self.fail(f"wire.FrameType differs from enum class frame_type "
                      f"in {path}:\n  " + "\n  ".join(lines))

    def test_frame_kinds_match_frame_kind(self) -> None:
        path = "framework/src/wire/protocol.hpp"
        cpp = parse_enum(self.header(path), "frame_kind")

        lines = names_by_value(message.KIND_NAMES, cpp, True)
        lines += [f"message.{n.upper()} is {getattr(message, n.upper())}, "
                  f"C++ has {v}" for n, v in cpp
                  if getattr(message, n.upper(), v) != v]

        if lines:
            self.fail(f"message.KIND_NAMES differs from enum class "
                      f"frame_kind in {path}:\n  " + "\n  ".join(lines))

    def test_constants_match_their_cpp_definitions(self) -> None:
        src = "framework/src/wire/"
        ser = "serializers/include/ferry/serializers/"
        mirrors = [
            ("wire.PROTOCOL", wire.PROTOCOL, src + "protocol.hpp",
             "wire_protocol_version"),
            ("wire.HEADER.size", wire.HEADER.size, src + "frame.hpp",
             "header_size"),
            ("wire.MAX_STR", wire.MAX_STR, src + "codec.hpp", "max_str"),
            ("wire.MAX_STRS", wire.MAX_STRS, src + "codec.hpp", "max_strs"),
            ("message.MAX_HEAD", message.MAX_HEAD, src + "message.hpp",
             "max_head"),
            ("message.MAX_BATCH_MESSAGES", message.MAX_BATCH_MESSAGES,
             src + "protocol.hpp", "max_batch_messages"),
            ("message.WIRE_OVERHEAD", message.WIRE_OVERHEAD,
             src + "protocol.hpp", "wire_overhead"),
            ("message.WIRE_FRAME_OVERHEAD", message.WIRE_FRAME_OVERHEAD,
             src + "protocol.hpp", "wire_frame_overhead"),
            ("message.MAX_FRAMES", message.MAX_FRAMES, ser + "options.hpp",
             "max_frames"),
            ("message.MAX_NAME_BYTES", message.MAX_NAME_BYTES,
             ser + "options.hpp", "max_name_bytes"),
            ("shapes.MAX_SHAPE", shapes.MAX_SHAPE, ser + "shape.hpp",
             "max_shape_size"),
            ("shapes.MAX_DEPTH", shapes.MAX_DEPTH, ser + "shape.hpp",
             "max_shape_depth"),
        ]
        lines = []
        for py_name, py, path, cpp_name in mirrors:
            cpp = parse_constant(self.header(path), cpp_name)
            if py != cpp:
                lines.append(f"{py_name} is {py}, {cpp_name} in {path} is "
                             f"{cpp}")
        preface = parse_chars(self.header(src + "frame.hpp"), "preface")
        if wire.PREFACE != preface:
            lines.append(f"wire.PREFACE is {wire.PREFACE!r}, preface in "
                         f"{src}frame.hpp is {preface!r}")

        if lines:
            self.fail("constants differ from C++:\n  " + "\n  ".join(lines))

    def test_message_id_bits_match_cafs_message_id(self) -> None:
        header = CAF_INCLUDE_DIR / "caf/message_id.hpp"
        if not header.is_file():
            self.skipTest(f"no CAF header {header} (set "
                          "FERRY_CAF_INCLUDE_DIR)")
        text = read_header(header)
        mirrors = [("message.ONE_WAY", message.ONE_WAY,
                    "default_async_value"),
                   ("message.RESPONSE_BIT", message.RESPONSE_BIT,
                    "response_flag_mask"),
                   ("message.REQUEST_MASK", message.REQUEST_MASK,
                    "request_id_mask")]

        lines = [f"{py_name} is {py:#x}, {cpp_name} in {header} is "
                 f"{parse_constant(text, cpp_name):#x}"
                 for py_name, py, cpp_name in mirrors
                 if py != parse_constant(text, cpp_name)]

        if lines:
            self.fail("message id bits differ from CAF's:\n  "
                      + "\n  ".join(lines))


if __name__ == "__main__":
    unittest.main()
