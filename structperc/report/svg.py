"""Plots as inline SVG text: a heat map of a matrix and a line plot. No plotting library: the page
must open offline, and a few hundred rectangles are all a heat map needs."""
from html import escape

import numpy as np

CELL = 18
FONT = 11


def _label_width(labels):
    return 8 + FONT * 0.62 * max((len(str(x)) for x in labels), default=1)


def _diverging(value, limit):
    """Blue for negative, red for positive, white at 0 (``limit``: the largest |value|)."""
    if not np.isfinite(value):
        return "#bbbbbb"
    x = 0.0 if limit <= 0 else max(-1.0, min(1.0, value / limit))
    if x >= 0:
        r, g, b = 255, round(255 - 170 * x), round(255 - 190 * x)
    else:
        r, g, b = round(255 + 190 * x), round(255 + 120 * x), 255
    return f"rgb({r},{g},{b})"


def _sequential(value, limit):
    """White at 0 to dark orange at ``limit``."""
    x = 0.0 if limit <= 0 else min(1.0, value / limit) ** 0.5
    return f"rgb({round(255 - 25 * x)},{round(255 - 150 * x)},{round(255 - 225 * x)})"


def heat_map(matrix, row_labels, column_labels, title, diverging=False, mask_diagonal=False, cell_text=True,
             row_title="", column_title="", css_class="heatmap"):
    """An SVG heat map of ``matrix`` (rows x columns), each cell titled with its row, column and value.

    diverging : colour negative values blue and positive ones red (weights); else white to orange
        (counts). mask_diagonal : the diagonal does not set the colour scale (a confusion matrix,
        whose diagonal dwarfs the errors). cell_text : print the values in the cells.
    """
    matrix = np.asarray(matrix, dtype=float)
    n_rows, n_cols = matrix.shape
    cell = 30 if max(n_rows, n_cols) <= 16 else CELL  # larger cells for a few labels
    left, top = _label_width(row_labels) + (16 if row_title else 0), _label_width(column_labels) + 24
    width, height = left + n_cols * cell + 10, top + n_rows * cell + 10
    scale = matrix.copy()
    if mask_diagonal and n_rows == n_cols:
        np.fill_diagonal(scale, 0)
    finite = scale[np.isfinite(scale)]
    limit = float(np.max(np.abs(finite))) if finite.size else 0.0
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="{css_class}" width="{width:.0f}" '
             f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
             f'aria-label="{escape(title)}"><title>{escape(title)}</title>',
             f'<g font-size="{FONT}" font-family="sans-serif">']
    for j, label in enumerate(column_labels):
        x = left + j * cell + cell / 2 + 4
        parts.append(f'<text x="{x:.1f}" y="{top - 6}" transform="rotate(-60 {x:.1f} {top - 6})">'
                     f'{escape(str(label))}</text>')
    for i, label in enumerate(row_labels):
        y = top + i * cell + cell * 0.7
        parts.append(f'<text x="{left - 4:.1f}" y="{y:.1f}" text-anchor="end">{escape(str(label))}</text>')
    for i in range(n_rows):
        for j in range(n_cols):
            value = matrix[i, j]
            if mask_diagonal and i == j:
                colour = "#e8f0e8"
            else:
                colour = _diverging(value, limit) if diverging else _sequential(value, limit)
            shown = "forbidden" if not np.isfinite(value) else (f"{value:g}" if not diverging else f"{value:+.3f}")
            parts.append(f'<rect class="cell" x="{left + j * cell}" y="{top + i * cell}" width="{cell - 1}" '
                         f'height="{cell - 1}" fill="{colour}"><title>{escape(str(row_labels[i]))} \u2192 '
                         f'{escape(str(column_labels[j]))}: {shown}</title></rect>')
            if cell_text and np.isfinite(value) and value != 0:
                text = f"{value:.0f}" if abs(value) < 1000 else f"{value / 1000:.0f}k"
                parts.append(f'<text x="{left + j * cell + cell / 2 - 0.5}" y="{top + i * cell + cell * 0.68}" '
                             f'text-anchor="middle" font-size="{9 if cell > 20 else 8}">{text}</text>')
    if row_title:
        parts.append(f'<text x="10" y="{top + n_rows * cell / 2}" transform="rotate(-90 10 {top + n_rows * cell / 2})"'
                     f' text-anchor="middle" font-weight="bold">{escape(row_title)}</text>')
    if column_title:
        parts.append(f'<text x="{left + n_cols * cell / 2}" y="12" text-anchor="middle" font-weight="bold">'
                     f'{escape(column_title)}</text>')
    parts.append("</g></svg>")
    return "".join(parts)


def line_plot(xs, series, title, x_label, y_label, marker=None, width=520, height=260):
    """An SVG line plot: ``series`` maps a name to y values over ``xs``; ``marker`` an x to mark
    (the epoch kept)."""
    left, right, top, bottom = 56, 110, 20, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    ys = [y for values in series.values() for y in values if y is not None]
    lo, hi = (min(ys), max(ys)) if ys else (0.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 1, hi + 1
    x_lo, x_hi = min(xs), max(xs)
    x_span = max(x_hi - x_lo, 1)

    def px(x):
        return left + (x - x_lo) / x_span * plot_w

    def py(y):
        return top + (hi - y) / (hi - lo) * plot_h

    colours = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd"]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="lineplot" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>',
             f'<g font-size="{FONT}" font-family="sans-serif">',
             f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#999"/>']
    for k in range(5):
        y = lo + (hi - lo) * k / 4
        parts.append(f'<text x="{left - 4}" y="{py(y) + 4:.1f}" text-anchor="end">{y:.2f}</text>'
                     f'<line x1="{left}" x2="{left + plot_w}" y1="{py(y):.1f}" y2="{py(y):.1f}" stroke="#eee"/>')
    for x in xs:
        parts.append(f'<text x="{px(x):.1f}" y="{top + plot_h + 14}" text-anchor="middle">{x}</text>')
    parts.append(f'<text x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle">{escape(x_label)}</text>')
    parts.append(f'<text x="14" y="{top + plot_h / 2}" transform="rotate(-90 14 {top + plot_h / 2})" '
                 f'text-anchor="middle">{escape(y_label)}</text>')
    if marker is not None:
        parts.append(f'<line x1="{px(marker):.1f}" x2="{px(marker):.1f}" y1="{top}" y2="{top + plot_h}" '
                     f'stroke="#555" stroke-dasharray="4 3"><title>epoch kept: {marker}</title></line>')
    for k, (name, values) in enumerate(series.items()):
        colour = colours[k % len(colours)]
        points = [(px(x), py(y)) for x, y in zip(xs, values) if y is not None]
        parts.append(f'<polyline class="series" fill="none" stroke="{colour}" stroke-width="2" points="'
                     + " ".join(f"{x:.1f},{y:.1f}" for x, y in points) + '"/>')
        parts += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"><title>{escape(name)}: '
                  f'{v:.2f}</title></circle>' for (x, y), v in zip(points, [v for v in values if v is not None])]
        parts.append(f'<text x="{left + plot_w + 8}" y="{top + 14 + 16 * k}" fill="{colour}">{escape(name)}</text>')
    parts.append("</g></svg>")
    return "".join(parts)
