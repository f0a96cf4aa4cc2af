"""What the reports' figures share (ga_mlir.train_mlir and
ga_mlir.torch.compare's): axes over the number of micro-batches N, and the
files they are saved to. The caller imports matplotlib (an optional
dependency) and chooses its backend first."""
import os


def plot_peaks(ax, ns, configurations, static_label):
    """The static peak (--ga-memory-report) of each of `configurations`
    over `ns` (KiB) and, when every one has been measured, the measured
    peak."""
    ax.plot(ns, [c["static_peak_bytes"] / 1024 for c in configurations],
            "o-", label=static_label)
    if all(c["measured_peak_bytes"] for c in configurations):
        ax.plot(ns, [c["measured_peak_bytes"] / 1024 for c in configurations],
                "x--", label="measured (heap)")


def finish_n_axes(ax, ylabel, title):
    """Axes over N (a log-2 scale) with their labels, title and legend."""
    ax.set_xscale("log", base=2)
    ax.set_xlabel("micro-batches N")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)


def save_figures(out_dir, draws, combined):
    """Each (name, draw) of `draws` (draw(ax) fills one axes) as
    out_dir/<name>.png, and all of them side by side as out_dir/`combined`."""
    import matplotlib.pyplot as plt  # optional: imported by the caller
    for name, draw in draws:
        fig, ax = plt.subplots(figsize=(6, 4.2))
        draw(ax)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, f"{name}.png"), dpi=110)
        plt.close(fig)
    fig, axes = plt.subplots(1, len(draws), figsize=(16, 4.6))
    for ax, (_, draw) in zip(axes, draws):
        draw(ax)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, combined), dpi=100)
    plt.close(fig)
