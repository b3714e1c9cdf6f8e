"""Text helpers of report.py: how figures, ranges, sizes and table cells
are written on the performance page, and how its prose is wrapped.

Python 3 standard library only.
"""
import math
import re
import textwrap

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
# Size classes of the ratio table: (label, smallest, largest) in bytes.
SIZE_CLASSES = (("64 B–4 KiB", 0, 4 * KiB), ("64 KiB", 4 * KiB + 1, 64 * KiB),
                ("1–64 MiB", 64 * KiB + 1, 64 * MiB),
                ("1 GiB", 64 * MiB + 1, 1 << 62))


def order_of(value, order):
    """Sort key: known values in their order, unknown ones after, by name."""
    return (order.index(value), "") if value in order else (len(order), value)


def size_label(n):
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if n >= unit and n % unit == 0:
            return f"{n // unit} {name}"
    return f"{n} B"


def size_class(n):
    for i, (label, low, high) in enumerate(SIZE_CLASSES):
        if low <= n <= high:
            return i, label
    return len(SIZE_CLASSES), size_label(n)


def number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def fmt(x):
    """A figure with as many digits as a range of them needs."""
    if x >= 1000:
        return f"{x:,.0f}"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 0.01 or x <= 0:
        return f"{x:.2f}"
    # Two significant digits, without an exponent: 0.00041.
    return f"{x:.{1 - math.floor(math.log10(x))}f}"


def span(values, show=fmt):
    """'a–b' over the numbers of `values`, 'a' when they agree, '—' if none."""
    values = [v for v in values if number(v)]
    if not values:
        return "—"
    low, high = show(min(values)), show(max(values))
    return low if low == high else f"{low}–{high}"


def text_span(texts):
    """'a–b' over figures as ferry-bench wrote them (least and greatest by
    value, each in its own text), 'a' when they agree, '—' if none."""
    if not texts:
        return "—"
    low = min(texts, key=float)
    high = max(texts, key=float)
    return low if float(low) == float(high) else f"{low}–{high}"


def plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def cell(text):
    """Text for a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def parse_figure(figure):
    """A target check's figure as (name, value text, need), or None for a
    row that failed or had no baseline.

    ferry-bench writes e.g. "ratio 2.318 (need >= 0.9)", "peak RSS 1042 MiB
    (need <= 1126)", "owner_copies 1.00 (need <= 1.2); ...", and for times
    compared with a reference "p50 291 us vs memcpy 12700 us (0.023x, need
    <= 1.5)": there the compared figure is the one before the 'x'.
    """
    need = re.search(r"need ([<>]=) ?(\d[\d.]*)", figure)
    need = f"{need.group(1)} {need.group(2)}" if need else None
    times = re.search(r"\((\d[\d.]*)x\b", figure)
    if figure.startswith("p50 ") and times:
        return "p50 over the reference (×)", times.group(1), need
    lead = re.match(r"([A-Za-z_][A-Za-z_ ]*?) (-?\d[\d.]*)( MiB)?", figure)
    if not lead:
        return None
    name = lead.group(1) + (" (MiB)" if lead.group(3) else "")
    return name, lead.group(2), need


def wrap_prose(lines):
    """Wraps paragraphs at 76 columns; tables, headings, comments and code
    blocks stay as they are."""
    out, in_code = [], False
    for line in lines:
        if line.startswith("```"):
            in_code = not in_code
        if in_code or line.startswith(("```", "|", "#", "<!--")) or \
                len(line) <= 76:
            out.append(line)
        else:
            out += textwrap.wrap(line, width=76, break_long_words=False,
                                 break_on_hyphens=False)
    return out
