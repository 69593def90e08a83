"""Draw the roadmap figure of the book: the five papers, the parts, and how they relate.

Writes ``book/images/roadmap.svg`` (deterministic: no random layout, fixed SVG hash salt).
Run after changing the parts of the book: ``python scripts/make_roadmap.py``.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "book" / "images" / "roadmap.svg"

# Okabe-Ito colours (safe for colour-blind readers); one per source
COLOURS = {
    "bg": "#999999",
    "S0": "#0072B2",
    "S1": "#E69F00",
    "S2": "#009E73",
    "S3": "#CC79A7",
    "S4": "#D55E00",
}

PAPERS = [  # key, label, y
    ("bg", "Background\nDP, Rényi DP, secure sum", 6.0),
    ("S0", "OcPBM paper\n(anonymous, 2024)", 5.0),
    ("S1", "Wu et al. 2023\nsketches", 4.0),
    ("S2", "Bharadwaj & Cormode 2022\nsample and threshold", 3.0),
    ("S3", "Cormode & Markov 2021\nbit pushing", 2.0),
    ("S4", "Liu et al. 2023\ncontribution bounds", 1.0),
]

PARTS = [  # label, y, sources
    ("I  Foundations (ch. 1)", 6.0, ["bg", "S0"]),
    ("II  Distributed DP with secure sum (ch. 2–6)", 5.0, ["S0"]),
    ("III  Sketching (ch. 7–8)", 4.0, ["S1"]),
    ("IV  Sampling as privacy (ch. 9–10)", 3.0, ["S2"]),
    ("V  Numeric aggregation (ch. 11–12)", 2.0, ["S3"]),
    ("VI  User-level contribution bounding (ch. 13–15)", 1.0, ["S4"]),
    ("VII  Deployment (ch. 16)", 0.0, ["bg"]),
]


def box(ax, x, y, w, h, text, colour, fontsize=9.5):
    ax.add_patch(
        FancyBboxPatch(
            (x, y - h / 2), w, h, boxstyle="round,pad=0.02,rounding_size=0.08", fc=colour, ec="none", alpha=0.18
        )
    )
    ax.add_patch(
        FancyBboxPatch((x, y - h / 2), w, h, boxstyle="round,pad=0.02,rounding_size=0.08", fc="none", ec=colour, lw=1.4)
    )
    ax.text(x + w / 2, y, text, ha="center", va="center", fontsize=fontsize, color="#222222")


def main() -> None:
    plt.rcParams["svg.hashsalt"] = "fedfreq-roadmap"
    fig, ax = plt.subplots(figsize=(10, 6.4))
    ax.set_xlim(0, 10.3)
    ax.set_ylim(-0.7, 6.7)
    ax.axis("off")
    px, pw, h = 0.1, 3.0, 0.72
    qx, qw = 4.6, 4.6
    ax.text(px + pw / 2, 6.55, "Source", ha="center", fontsize=11, weight="bold")
    ax.text(qx + qw / 2, 6.55, "Part of the book", ha="center", fontsize=11, weight="bold")
    ys = {}
    for key, label, y in PAPERS:
        box(ax, px, y, pw, h, label, COLOURS[key])
        ys[key] = y
    for label, y, sources in PARTS:
        colour = COLOURS[sources[0]] if sources[0] != "bg" or label.startswith("I ") else "#555555"
        box(ax, qx, y, qw, h, label, colour)
        for s in sources:
            ax.add_patch(
                FancyArrowPatch(
                    (px + pw + 0.05, ys[s]),
                    (qx - 0.05, y),
                    arrowstyle="-|>",
                    mutation_scale=12,
                    color=COLOURS[s],
                    lw=1.3,
                )
            )
    # every part builds on Part I; Part VII makes every part's noise deployable
    for i, (_, y, _) in enumerate(PARTS):
        if 0 < i < len(PARTS) - 1:
            ax.add_patch(
                FancyArrowPatch(
                    (qx + qw + 0.05, y),
                    (qx + qw + 0.05, 0.0 + 0.3),
                    connectionstyle="arc3,rad=-0.25",
                    arrowstyle="-|>",
                    mutation_scale=9,
                    color="#777777",
                    lw=0.8,
                    linestyle=(0, (3, 2)),
                )
            )
    ax.text(10.15, 3.2, "noise made deployable", fontsize=7.5, color="#555555", rotation=90, ha="center", va="center")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT, format="svg", bbox_inches="tight", facecolor="white", metadata={"Date": None})
    if "--png" in __import__("sys").argv:
        fig.savefig(OUT.with_suffix(".png"), dpi=80, bbox_inches="tight")
    plt.close(fig)
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
