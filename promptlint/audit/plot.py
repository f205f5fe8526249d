"""A small hand-written SVG: the class waterfall and the capacity curve (no plotting library)."""

from __future__ import annotations

from typing import Any, Dict, List
from xml.sax.saxutils import escape

COLORS = {"HIT": "#2e7d32", "M3": "#9e9e9e", "M1": "#c62828", "M2": "#ef6c00", "M4": "#6a1b9a",
          "M6": "#1565c0", "M7": "#5d4037", "M5": "#f9a825", "U": "#424242"}


def svg(summary: Dict[str, Any], width: int = 720) -> str:
    total = summary["prompt_tokens"] or 1
    bars = [("observed", summary["cached_tokens"], COLORS["HIT"])]
    for c in ("M3", "M1", "M2", "M4", "M6", "M7", "M5", "U"):
        t = summary["classes"].get(c, {}).get("tokens", 0)
        bars.append((c, t, COLORS[c]))
    cap = (summary.get("capacity") or {}).get("curve") or []
    height = 60 + 26 * len(bars) + (260 if cap else 0)
    out: List[str] = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
                      '<text x="10" y="20" font-size="14">Prompt tokens by outcome (share of all prompt tokens)</text>']
    x0, bw = 110, width - 230
    for i, (name, tokens, color) in enumerate(bars):
        y = 36 + 26 * i
        w = bw * tokens / total
        out.append(f'<text x="10" y="{y + 14}">{escape(name)}</text>')
        out.append(f'<rect x="{x0}" y="{y}" width="{w:.1f}" height="18" fill="{color}"/>')
        out.append(f'<text x="{x0 + w + 6:.1f}" y="{y + 14}">{tokens} ({100 * tokens / total:.1f}%)</text>')
    if cap:
        top = 60 + 26 * len(bars)
        ph, pw = 190, width - 120
        maxc = max(p["blocks"] for p in cap)
        import math
        lx = lambda b: 70 + pw * (math.log2(b) / math.log2(maxc) if maxc > 1 else 1)
        maxy = max(1, max(p["hit_tokens"] for p in cap))
        ly = lambda t: top + 20 + ph - ph * t / maxy
        out.append(f'<text x="10" y="{top + 10}" font-size="14">Hit tokens vs KV capacity (blocks, log scale; LRU model)</text>')
        out.append(f'<line x1="70" y1="{top + 20 + ph}" x2="{70 + pw}" y2="{top + 20 + ph}" stroke="black"/>')
        out.append(f'<line x1="70" y1="{top + 20}" x2="70" y2="{top + 20 + ph}" stroke="black"/>')
        pts = " ".join(f"{lx(p['blocks']):.1f},{ly(p['hit_tokens']):.1f}" for p in cap)
        out.append(f'<polyline points="{pts}" fill="none" stroke="#1565c0" stroke-width="2"/>')
        for p in cap:
            out.append(f'<circle cx="{lx(p["blocks"]):.1f}" cy="{ly(p["hit_tokens"]):.1f}" r="2.5" fill="#1565c0"/>')
        out.append(f'<text x="70" y="{top + 36 + ph}">1</text><text x="{70 + pw - 40}" y="{top + 36 + ph}">{maxc}</text>')
        out.append(f'<text x="4" y="{top + 26}">{maxy}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
