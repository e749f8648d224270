"""statlite: descriptive statistics, histogram binning, correlation and smoothing for plain lists."""
from .describe import describe, mean, median, mode, percentile, stdev, variance, weighted_mean
from .histogram import bin_edges, histogram, quantile_bins
from .relate import covariance, linear_fit, pearson, zscores
from .smooth import ewma, moving_average, rank

__all__ = [
    "describe", "mean", "median", "mode", "percentile", "stdev", "variance", "weighted_mean",
    "bin_edges", "histogram", "quantile_bins", "covariance", "linear_fit", "pearson", "zscores",
    "ewma", "moving_average", "rank",
]
