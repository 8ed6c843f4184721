"""One PNG per op from its results JSON: time and % of copy bandwidth against the swept axis,
one colour per caller, one line style per group (width). Needs matplotlib (Agg); without it, `draw` says so and
returns False: run `ktile bench --plot-from DIR` later where matplotlib is installed."""
from __future__ import annotations

COLORS = {"ktile": "C3", "torch": "C0", "torch.compile": "C2", "triton": "C1"}   # per caller
LINES = ("-", "--", ":", "-.")                                                 # per group
MARKERS = ("o", "s", "^", "v", "D", "x")


def _matplotlib():
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def series(results: list[dict]) -> dict[tuple[str, str], list[tuple[int, dict]]]:
    """(caller, group) -> [(x, timing entry)] for every timed point, sorted by x."""
    lines: dict = {}
    for row in results:
        for caller in COLORS:
            entry = row.get(caller, {})
            if "ms" in entry:
                lines.setdefault((caller, str(row["group"])), []).append((row["x"], entry))
    return {key: sorted(points, key=lambda p: p[0]) for key, points in lines.items()}


def draw(op_json: dict, path: str) -> bool:
    plt = _matplotlib()
    if plt is None:
        return False
    fig, (ax_time, ax_bw) = plt.subplots(1, 2, figsize=(12, 4.5))
    lines = series(op_json["results"])
    groups = sorted({group for _, group in lines}, key=lambda g: (len(g), g))
    for (caller, group), points in lines.items():
        xs = [p[0] for p in points]
        k = groups.index(group)
        style = {"color": COLORS[caller], "linestyle": LINES[k % len(LINES)],
                 "marker": MARKERS[k % len(MARKERS)], "markersize": 4,
                 "linewidth": 2.2 if caller == "ktile" else 1.2, "label": f"{caller} {group}"}
        ax_time.plot(xs, [p[1]["ms"] * 1e3 for p in points], **style)
        ax_bw.plot(xs, [100 * p[1]["of_copy"] for p in points], **style)
    for ax, ylabel in ((ax_time, "µs (median, L2 flushed)"), (ax_bw, "% of copy bandwidth")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel(op_json.get("axis", "rows"))
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    ax_time.set_yscale("log")
    ax_bw.axhline(90, color="grey", linewidth=0.8, linestyle="--")   # issue #13's goal past 64 MiB
    ax_bw.legend(fontsize=6, ncol=2)
    meta = op_json.get("meta", {})
    fig.suptitle(f"{op_json['op']} ({meta.get('device', '?')}, copy "
                 f"{meta.get('copy_gbps', 0):.0f} GB/s)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
