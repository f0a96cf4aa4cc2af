"""What the reports' figures share (ga_mlir.train_mlir and
ga_mlir.torch.compare's): axes over the number of micro-batches N."""


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
